//! A kept instance's record: what reads back, and what is refused rather than restored.

use heureka_core::{Health, InstanceStatus, PartStamps, Parts, Stamp, StampedCopy};

use super::*;

fn removed_copy() -> StampedCopy {
    let stamp = Stamp {
        ms: 1_000,
        counter: 0,
        node: 7,
    };
    StampedCopy {
        app: "ORDERS".into(),
        id: "o1".into(),
        parts: Parts {
            registration: None,
            own_status: InstanceStatus::Up,
            overridden: None,
            health: Health::Passing,
            stamps: PartStamps {
                registration: stamp,
                status: stamp,
                overridden: Stamp::ZERO,
                removed: Stamp { ms: 2_000, ..stamp },
                health: Stamp::ZERO,
            },
        },
        leased: false,
    }
}

#[test]
fn a_cancel_reads_back_as_written() {
    let kept = KeptInstance {
        copy: removed_copy(),
        kept: Kept::Removed {
            removal: Removal::Cancelled,
            at: 2_000,
        },
    };
    let record = encode_kept(&kept);
    assert!(record.starts_with(br#"{"kept":"removed","removal":"cancelled","at":2000,"copy":{"#));
    assert_eq!(decode_kept(&record), Ok(kept));
}

#[test]
fn garbage_truncation_and_contradictions_are_errors_not_records() {
    let kept = KeptInstance {
        copy: removed_copy(),
        kept: Kept::Removed {
            removal: Removal::Cancelled,
            at: 2_000,
        },
    };
    let record = encode_kept(&kept);
    assert!(decode_kept(&record[..record.len() - 3]).is_err());
    assert!(decode_kept(b"\x00\xff garbage").is_err());
    assert!(decode_kept(br#"{"kept":"lease"}"#).is_err());
    let text = String::from_utf8(record).unwrap();
    // A lease record whose copy says no lease is held.
    let contradiction = text.replace(
        r#""kept":"removed","removal":"cancelled","at":2000"#,
        r#""kept":"lease","registrationTimestamp":1,"serviceUpTimestamp":1"#,
    );
    let error = decode_kept(contradiction.as_bytes()).unwrap_err();
    assert_eq!(error.to_string(), "copy.leased contradicts kept");
}
