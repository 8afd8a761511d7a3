//! A plan that takes kept runs whole cuts a document where a plan from scratch would.

use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

/// A document's applications: sorted names, each with its key.
type Listed = Vec<(String, (u64, usize))>;

/// A document's members: sorted names, each with its key.
fn members(apps: &[(String, (u64, usize))]) -> Vec<Member<'_>> {
    apps.iter()
        .map(|(name, key)| Member { name, key: *key })
        .collect()
}

/// The runs a plan from scratch cuts `members` into.
fn cut_from_scratch(members: &[Member<'_>]) -> Vec<Range<usize>> {
    cut_runs(members, &|_| None)
        .into_iter()
        .map(|(range, _)| range)
        .collect()
}

/// The runs of a plan of `members`, as a later plan finds them: by first name, each with
/// its members and boundaries.
fn planned(members: &[Member<'_>]) -> HashMap<String, (RunMembers, Boundaries)> {
    cut_from_scratch(members)
        .into_iter()
        .map(|range| {
            let run: RunMembers = members[range]
                .iter()
                .map(|member| (member.name.to_owned(), member.key))
                .collect();
            (run[0].0.clone(), (run.clone(), Boundaries::of(&run)))
        })
        .collect()
}

/// The plan's cut of `after`, taking whole each run of `old` that stands where it starts
/// (as `Runs::kept_run` does, without the age).
fn cut_keeping(
    old: &HashMap<String, (RunMembers, Boundaries)>,
    after: &[Member<'_>],
) -> Vec<(Range<usize>, Option<KeptRun>)> {
    let kept = |rest: &[Member<'_>]| {
        let (run, boundaries) = old.get(rest[0].name)?;
        boundaries.stands_at(run, rest).then(|| KeptRun {
            first: Arc::from(run[0].0.as_str()),
            len: run.len(),
        })
    };
    cut_runs(after, &kept)
}

/// A registry's applications (names sorted, up to 40 instances each), and the same registry
/// after some changes: applications changed, added and removed.
fn before_and_after() -> impl Strategy<Value = (Listed, Listed)> {
    let app = (0u16..400, 1usize..40);
    (
        proptest::collection::btree_map(0u16..400, 1usize..40, 0..120),
        proptest::collection::vec((app, 0u8..3), 0..12),
    )
        .prop_map(|(before, changes)| {
            let mut after = before.clone();
            for ((name, instances), change) in changes {
                match change {
                    0 => {
                        after.remove(&name);
                    }
                    _ => {
                        after.insert(name, instances);
                    }
                }
            }
            let listed = |apps: &std::collections::BTreeMap<u16, usize>,
                          changed: &dyn Fn(u16, usize) -> bool| {
                apps.iter()
                    .map(|(&name, &instances)| {
                        let version = u64::from(changed(name, instances));
                        (format!("APP-{name:03}"), (version, instances))
                    })
                    .collect::<Vec<_>>()
            };
            let before_listed = listed(&before, &|_, _| false);
            let after_listed = listed(&after, &|name, instances| {
                before.get(&name) != Some(&instances)
            });
            (before_listed, after_listed)
        })
}

proptest! {
    /// Whatever changed, the kept runs taken whole leave every run where a plan from scratch
    /// puts it, and each kept run's members are the document's there.
    #[test]
    fn kept_runs_taken_whole_cut_the_document_as_a_plan_from_scratch((before, after) in before_and_after()) {
        let old = planned(&members(&before));
        let after = members(&after);
        let cut = cut_keeping(&old, &after);
        let ranges: Vec<Range<usize>> = cut.iter().map(|(range, _)| range.clone()).collect();
        prop_assert_eq!(ranges, cut_from_scratch(&after));
        for (range, keep) in &cut {
            if let Some(keep) = keep {
                let (run, _) = &old[&*keep.first];
                let here: Vec<(&str, (u64, usize))> = after[range.clone()].iter().map(|m| (m.name, m.key)).collect();
                let was: Vec<(&str, (u64, usize))> = run.iter().map(|(name, key)| (name.as_str(), *key)).collect();
                prop_assert_eq!(here, was);
            }
        }
    }
}

#[test]
fn an_unchanged_document_keeps_every_run() {
    let apps: Listed = (0..300).map(|n| (format!("APP-{n:03}"), (1, 7))).collect();
    let old = planned(&members(&apps));
    let after = members(&apps);
    let cut = cut_keeping(&old, &after);
    assert!(cut.len() > 10);
    assert!(cut.iter().all(|(_, keep)| keep.is_some()));
}

#[test]
fn a_run_cut_inside_is_never_kept() {
    // 300 instances in one application end a run there (MAX_INSTANCES), so a run that holds
    // it and another after it was not cut by `ends_run`.
    let run: RunMembers = vec![("A".to_owned(), (1, 300)), ("B".to_owned(), (1, 1))];
    assert_eq!(Boundaries::of(&run), Boundaries::Inside);
    let apps = [("A".to_owned(), (1, 300)), ("B".to_owned(), (1, 1))];
    assert!(!Boundaries::Inside.stands_at(&run, &members(&apps)));
}
