//! Any bytes as a stamped batch or its answer (Heureka's causal replication): the first byte
//! picks which (even: batch, odd: answer), the rest is the body. The readers answer or give
//! one-line errors, never panic; whatever they accept is written as strict JSON that reads
//! back as the same value.
#![no_main]

use heureka_core::StampedCopy;
use heureka_fuzz as check;
use heureka_wire::{
    decode_stamped_batch, decode_stamped_response, encode_stamped_batch, encode_stamped_response,
    Format, StampedItem, StampedResult,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&selector, body)) = input.split_first() else {
        return;
    };
    if selector & 1 == 0 {
        batch(body);
    } else {
        answer(body);
    }
});

fn batch(body: &[u8]) {
    let elements = match decode_stamped_batch(body, check::NOW) {
        Ok(elements) => elements,
        Err(error) => return check::one_line(&error),
    };
    let mut first = Vec::new();
    for element in elements {
        match element {
            Ok(item) => first.push(item),
            Err(error) => check::one_line(&error),
        }
    }
    let document = encode_stamped_batch(&first);
    check::parses_strictly(&document, Format::Json);
    let second: Vec<StampedItem> = decode_stamped_batch(&document, check::NOW)
        .expect("re-reads")
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("every element re-reads");
    let normalised = |items: Vec<StampedItem>| -> Vec<StampedItem> {
        items
            .into_iter()
            .map(|item| StampedItem {
                copy: normalised(item.copy),
                ..item
            })
            .collect()
    };
    assert_eq!(normalised(second), normalised(first));
}

fn answer(body: &[u8]) {
    let first = match decode_stamped_response(body) {
        Ok(results) => results,
        Err(error) => return check::one_line(&error),
    };
    let document = encode_stamped_response(&first);
    check::parses_strictly(&document, Format::Json);
    let second = decode_stamped_response(&document).expect("re-reads");
    let normalised = |results: Vec<StampedResult>| -> Vec<StampedResult> {
        results
            .into_iter()
            .map(|result| StampedResult {
                copy: result.copy.map(normalised),
                ..result
            })
            .collect()
    };
    assert_eq!(normalised(second), normalised(first));
}

/// A copy's instance as [`check::normalised`] has it.
fn normalised(mut copy: StampedCopy) -> StampedCopy {
    copy.parts.registration = copy.parts.registration.map(check::normalised);
    copy
}
