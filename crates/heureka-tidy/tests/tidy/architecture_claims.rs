//! ARCHITECTURE.md's checkable claims hold: every file it names exists, and every test it
//! names as a guard exists. A map that names a file that has moved, or an invariant guarded
//! by a test that was renamed away, misleads the newcomer it is written for.

use std::fs;
use std::path::Path;

use crate::workspace::{assert_no_sites, root, Site};

/// The spans written in backticks on each line of ARCHITECTURE.md, with their line numbers.
fn quoted() -> Vec<(usize, String)> {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut spans = Vec::new();
    let mut in_fence = false;
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let parts: Vec<&str> = line.split('`').collect();
        for span in parts.iter().skip(1).step_by(2) {
            spans.push((index + 1, (*span).to_owned()));
        }
    }
    spans
}

/// Every file of the repository (outside build output and hidden directories), as paths
/// relative to the root.
fn all_files() -> Vec<String> {
    let mut files = Vec::new();
    collect(&root(), &mut files);
    files
}

fn collect(dir: &Path, files: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') || matches!(name.as_str(), "target" | "node_modules") {
            continue;
        }
        if path.is_dir() {
            collect(&path, files);
        } else {
            let relative = path.strip_prefix(root()).unwrap();
            let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
            files.push(parts.join("/"));
        }
    }
}

/// Whether a span names a file: a path with a known source or document ending.
fn names_a_file(span: &str) -> bool {
    const ENDINGS: &[&str] = &[".rs", ".py", ".md", ".js", ".sh", ".toml", ".java", ".lua"];
    !span.contains(char::is_whitespace)
        && !span.contains(['*', '{', '<', '('])
        && ENDINGS.iter().any(|ending| span.ends_with(ending))
}

/// Whether some file is at `span` (from the root) or ends with `/span` (the map names files
/// from their crate's `src/` or a folder it has introduced). A file in a hidden directory
/// (`.cargo/config.toml`) is only found from the root.
fn exists(span: &str, files: &[String]) -> bool {
    let span = span.trim_start_matches("./");
    root().join(span).is_file()
        || files
            .iter()
            .any(|file| file == span || file.ends_with(&format!("/{span}")))
}

/// Spans of ARCHITECTURE.md (line, text) as the sites a failure lists.
fn sites(spans: impl Iterator<Item = (usize, String)>) -> Vec<Site> {
    spans
        .map(|(line, text)| Site {
            path: "ARCHITECTURE.md".to_owned(),
            line,
            text,
        })
        .collect()
}

#[test]
fn every_file_the_architecture_names_exists() {
    let files = all_files();
    let missing = quoted()
        .into_iter()
        .filter(|(_, span)| names_a_file(span) && !exists(span, &files));
    assert_no_sites(
        &sites(missing),
        "every file ARCHITECTURE.md names exists",
        "the code map is how a newcomer finds the code; a file that moved must move in the map \
         in the same change.",
    );
}

/// The test names a line offers as guards: snake_case spans on a line that says "guarded".
fn named_guards() -> Vec<(usize, String)> {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    quoted()
        .into_iter()
        .filter(|(line, span)| {
            // A guard sentence may run over the next lines: look back two lines for the word.
            let from = line.saturating_sub(3);
            let says_guarded = lines[from..*line]
                .iter()
                .any(|l| l.to_lowercase().contains("guarded by"));
            says_guarded
                && span.contains('_')
                && span
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .collect()
}

/// Whether a Rust `fn` or Python `def` of that name is defined anywhere in the repository.
fn test_defined(name: &str, sources: &[String]) -> bool {
    let rust = format!("fn {name}(");
    let python = format!("def {name}(");
    sources
        .iter()
        .any(|text| text.contains(&rust) || text.contains(&python))
}

#[test]
fn every_test_the_architecture_names_as_a_guard_exists() {
    let sources: Vec<String> = all_files()
        .iter()
        .filter(|file| file.ends_with(".rs") || file.ends_with(".py"))
        .filter_map(|file| fs::read_to_string(root().join(file)).ok())
        .collect();
    let missing = named_guards()
        .into_iter()
        .filter(|(_, name)| !test_defined(name, &sources));
    assert_no_sites(
        &sites(missing),
        "every test ARCHITECTURE.md names as a guard exists",
        "an invariant is only as good as the test that guards it; a renamed or deleted test \
         leaves the invariant unguarded while the map still promises it.",
    );
}
