//! `heureka.namespaces.*`: auto-created up to 100 under `/ns`; names and quotas read
//! lower-cased; a name no namespace may have is an error naming its key.

use super::*;

fn namespaces(args: &[&str]) -> NamespacesConfig {
    config(&Dir::new(), args, &[]).heureka.namespaces
}

#[test]
fn namespaces_are_auto_created_up_to_100_under_ns_by_default() {
    let namespaces = namespaces(&[]);
    assert_eq!(namespaces.path_prefix, "/ns");
    assert!(namespaces.auto_create);
    assert_eq!(namespaces.max, 100);
    assert!(namespaces.declared.is_empty());
}

#[test]
fn declared_names_and_quotas_are_read_lower_cased() {
    let namespaces = namespaces(&[
        "--heureka.namespaces.declared=Payments,search",
        "--heureka.namespaces.max-instances.Payments=500",
    ]);
    assert_eq!(namespaces.declared, ["payments", "search"]);
    assert_eq!(namespaces.max_instances.get("payments"), Some(&500));
}

#[test]
fn a_declared_name_no_namespace_may_have_is_an_error_naming_the_key() {
    let message = error(&Dir::new(), &["--heureka.namespaces.declared=a/b"], &[]);
    assert!(message.contains("heureka.namespaces.declared"), "{message}");
}

#[test]
fn a_quota_for_a_name_no_namespace_may_have_is_an_error_naming_the_key() {
    let message = error(
        &Dir::new(),
        &["--heureka.namespaces.max-instances.-x=5"],
        &[],
    );
    assert!(
        message.contains("heureka.namespaces.max-instances.-x"),
        "{message}"
    );
}
