//! The namespaces of this node: `default` (the unprefixed API), those created since start-up,
//! and the vacant one that answers for a name not created yet. A namespace is created by the
//! first request that needs it to exist (a registration, or a peer's replication of writes
//! in it), within `heureka.namespaces.*`; declared ones and those restored from disk exist
//! from the start. Nothing removes one while the server runs.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use axum::http::Extensions;
use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;
use tokio::task::JoinSet;

use crate::config::NamespacesConfig;
use crate::namespace_name::{self as name, DEFAULT};
use crate::replication::NamespaceDirectory;
use crate::state::SharedState;

/// One namespace: its state and its background tasks (which stop when it is dropped).
pub(crate) struct Namespace {
    pub(crate) state: SharedState,
    tasks: Mutex<Vec<JoinSet<()>>>,
}

impl Namespace {
    pub(crate) fn new(state: SharedState, tasks: Vec<JoinSet<()>>) -> Namespace {
        Namespace {
            state,
            tasks: Mutex::new(tasks),
        }
    }

    /// Stops its background tasks (at shutdown, after the last flush).
    pub(crate) fn abort_tasks(&self) {
        for tasks in self.tasks.lock().iter_mut() {
            tasks.abort_all();
        }
    }
}

impl fmt::Debug for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Namespace")
            .field("name", &self.state.namespace)
            .finish_non_exhaustive()
    }
}

/// Builds a new namespace of the given (valid, lower-case) name, its tasks started.
pub(crate) type Factory = Box<dyn Fn(&str) -> Result<Namespace, String> + Send + Sync>;

/// Why a namespace was not created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// `heureka.namespaces.auto-create` is off and the name is not declared.
    NotDeclared(String),
    /// `heureka.namespaces.max` namespaces exist besides `default`.
    Full { name: String, max: usize },
    /// Its state could not be built (its store on disk would not open).
    Failed { name: String, why: String },
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::NotDeclared(name) => write!(
                f,
                "namespace '{name}' does not exist: it is not in heureka.namespaces.declared \
                 and heureka.namespaces.auto-create is false"
            ),
            Refused::Full { name, max } => write!(
                f,
                "namespace '{name}' not created: this server holds heureka.namespaces.max={max} \
                 namespaces besides default"
            ),
            Refused::Failed { name, why } => write!(f, "namespace '{name}' not created: {why}"),
        }
    }
}

/// The namespace a request is in, when it is not the default one.
#[derive(Clone, Debug)]
pub(crate) struct InNamespace(pub(crate) SharedState);

impl InNamespace {
    /// The state of the namespace `extensions` say the request is in, if not the default.
    pub(crate) fn of(extensions: &Extensions) -> Option<&SharedState> {
        extensions.get::<InNamespace>().map(|within| &within.0)
    }
}

/// Marks a request to a namespace that does not exist yet: which, and where to create it.
#[derive(Clone, Debug)]
pub(crate) struct Vacancy {
    pub(crate) namespaces: Arc<Namespaces>,
    pub(crate) name: String,
}

/// Every namespace of this node.
pub(crate) struct Namespaces {
    default: Arc<Namespace>,
    /// Answers for a name not created yet: an empty registry with no peers and no tasks,
    /// never written (its router creates the namespace for the writes that create one).
    vacant: Arc<Namespace>,
    /// Looked up on every request to a namespace: hashed (foldhash, randomly seeded, as the
    /// names come from requests) rather than ordered, which compared names a dozen times.
    others: RwLock<HashMap<String, Arc<Namespace>, foldhash::fast::RandomState>>,
    settings: NamespacesConfig,
    factory: Factory,
    /// One creation at a time, so two first registrations build one namespace.
    creating: Mutex<()>,
    /// Woken by every creation: the vacant namespace's streams end when theirs is created.
    created: Notify,
}

impl fmt::Debug for Namespaces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Namespaces")
            .field("others", &self.others.read().keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Namespaces {
    pub(crate) fn new(
        default: Namespace,
        vacant: Namespace,
        settings: NamespacesConfig,
        factory: Factory,
    ) -> Namespaces {
        Namespaces {
            default: Arc::new(default),
            vacant: Arc::new(vacant),
            others: RwLock::new(HashMap::default()),
            settings,
            factory,
            creating: Mutex::new(()),
            created: Notify::new(),
        }
    }

    /// `heureka.namespaces.path-prefix`.
    pub(crate) fn prefix(&self) -> &str {
        &self.settings.path_prefix
    }

    pub(crate) fn default_namespace(&self) -> &Arc<Namespace> {
        &self.default
    }

    pub(crate) fn vacant(&self) -> &Arc<Namespace> {
        &self.vacant
    }

    /// The namespace called `name` (valid, lower-case), if it exists.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<Namespace>> {
        if name == DEFAULT {
            return Some(self.default.clone());
        }
        self.others.read().get(name).cloned()
    }

    /// The namespace called `name`, created if it does not exist and the settings allow it.
    pub(crate) fn create(&self, name: &str) -> Result<Arc<Namespace>, Refused> {
        if let Some(namespace) = self.get(name) {
            return Ok(namespace);
        }
        let declared = self.settings.declared.iter().any(|known| known == name);
        if !self.settings.auto_create && !declared {
            return Err(Refused::NotDeclared(name.to_owned()));
        }
        let _one_at_a_time = self.creating.lock();
        let count = self.others.read().len();
        if count >= self.settings.max && !declared {
            return Err(Refused::Full {
                name: name.to_owned(),
                max: self.settings.max,
            });
        }
        self.open(name)
    }

    /// The namespace called `name`, created whatever the settings say: a declared one, or one
    /// whose registry was kept on disk.
    pub(crate) fn open(&self, name: &str) -> Result<Arc<Namespace>, Refused> {
        if let Some(namespace) = self.get(name) {
            return Ok(namespace);
        }
        let namespace = (self.factory)(name).map_err(|why| Refused::Failed {
            name: name.to_owned(),
            why,
        })?;
        let namespace = Arc::new(namespace);
        self.others
            .write()
            .entry(name.to_owned())
            .or_insert_with(|| namespace.clone());
        self.created.notify_waiters();
        tracing::info!(namespace = name, "namespace created");
        Ok(namespace)
    }

    /// Resolves once the namespace called `name` exists.
    pub(crate) async fn until_created(&self, name: &str) {
        loop {
            // Registered before the check, so a creation between the two is not missed.
            let notified = self.created.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.get(name).is_some() {
                return;
            }
            notified.await;
        }
    }

    /// Every namespace, `default` first, then by name.
    pub(crate) fn all(&self) -> Vec<Arc<Namespace>> {
        let mut others: Vec<Arc<Namespace>> = self.others.read().values().cloned().collect();
        others.sort_by(|a, b| a.state.namespace.cmp(&b.state.namespace));
        let mut all = vec![self.default.clone()];
        all.extend(others);
        all
    }
}

/// What replication's discovery (`replication/discovery.rs`) creates namespaces through: a
/// name a peer lists, checked as any name, created within `heureka.namespaces.*`.
impl NamespaceDirectory for Namespaces {
    fn holds(&self, listed: &str) -> bool {
        name::parse(listed).is_ok_and(|name| self.get(&name).is_some())
    }

    fn create(&self, listed: &str) -> Result<(), String> {
        let name = name::parse(listed)
            .map_err(|why| format!("namespace '{listed}' listed by a peer: {why}"))?;
        Namespaces::create(self, &name)
            .map(drop)
            .map_err(|refused| refused.to_string())
    }
}
