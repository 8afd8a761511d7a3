//! Metadata update (§3.13): Eureka's `updateMetadata`, which merges the entries into the stored
//! instance and registers it again, within the limits on metadata (`limits.rs`).

use crate::change::ChangeKind;
use crate::invalid_registration::InvalidRegistration;
use crate::model::Millis;
use crate::origin::Origin;
use crate::register::Stamping;
use crate::registry::{app_key, visible_lease_mut, Registry};

impl Registry {
    /// Merge metadata in place, then re-register the stored instance (§3.13). False when
    /// unknown; refused, changing nothing, when the merged metadata is over the limits.
    ///
    /// The first value of a repeated key wins, as Eureka reads only `values[0]`.
    /// `lastDirtyTimestamp` is not bumped, so the client's next re-register overwrites this.
    pub fn update_metadata(
        &mut self,
        app: &str,
        id: &str,
        entries: Vec<(String, String)>,
        now: Millis,
    ) -> Result<bool, InvalidRegistration> {
        let app = app_key(app);
        let expiration_enabled = self.lease_expiration_enabled();
        let Some(lease) = visible_lease_mut(&mut self.apps, &app, id, now, expiration_enabled)
        else {
            return Ok(false);
        };
        let mut instance = lease.holder.to_instance();
        let mut seen: Vec<&str> = Vec::with_capacity(entries.len());
        for (key, value) in &entries {
            if !seen.contains(&key.as_str()) {
                seen.push(key);
                instance.metadata.insert(key.clone(), value.clone());
            }
        }
        self.policy.limits.check_metadata(&instance.metadata)?;
        let stamping = Stamping::Document;
        self.register_as(
            ChangeKind::MetadataUpdated,
            instance,
            Origin::Client,
            stamping,
            now,
        );
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
