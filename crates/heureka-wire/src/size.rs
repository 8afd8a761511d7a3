//! Output size estimates, so each encoder allocates its buffer once.
//!
//! A full fetch of 10,000 instances is several megabytes; growing a `Vec` by doubling would copy
//! it about twenty times. The estimate counts the variable-length text of each instance and adds
//! the fixed overhead of its field names.

use heureka_core::{Application, Applications, Instance};

/// Bytes of text an instance carries, without any field names or markup.
pub(crate) fn instance_text(i: &Instance) -> usize {
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let dc = i.data_center_info.as_ref().map_or(0, |dc| {
        dc.name.len()
            + dc.metadata
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>()
    });
    opt(&i.instance_id)
        + i.host_name.len()
        + i.app.len()
        + i.ip_addr.len()
        + i.sid.len()
        + dc
        + i.metadata
            .iter()
            .map(|(k, v)| 2 * k.len() + v.len())
            .sum::<usize>()
        + opt(&i.app_group_name)
        + opt(&i.home_page_url)
        + opt(&i.status_page_url)
        + opt(&i.health_check_url)
        + opt(&i.secure_health_check_url)
        + opt(&i.vip_address)
        + opt(&i.secure_vip_address)
        + opt(&i.asg_name)
}

/// Estimated size of a whole document, given the fixed markup cost of one instance and of one
/// metadata entry in the target format.
pub(crate) fn applications(apps: &Applications, per_instance: usize, per_entry: usize) -> usize {
    apps.applications
        .iter()
        .flat_map(|a| &a.instances)
        .map(|i| per_instance + instance_text(i) + per_entry * i.metadata.len())
        .sum::<usize>()
        + apps
            .applications
            .iter()
            .map(|a| a.name.len() + 64)
            .sum::<usize>()
        + 128
}

/// Estimated size of one application's instances, given the fixed markup cost of one instance.
pub(crate) fn application(app: &Application, per_instance: usize) -> usize {
    app.instances
        .iter()
        .map(|i| per_instance + instance_text(i))
        .sum()
}
