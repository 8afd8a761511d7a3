//! The log thread's linger: lines logged close together leave in one write, all of them, in
//! order, and a quiet log waits for nothing.

use std::io::{BufWriter, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tracing_appender::non_blocking::NonBlockingBuilder;

use super::{Lingering, LINGER};

/// An output that keeps every `write` it is given as one chunk.
#[derive(Clone, Default)]
struct Chunks(Arc<Mutex<Vec<Vec<u8>>>>);

impl Write for Chunks {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().push(bytes.to_vec());
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Chunks {
    fn writes(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().concat()).unwrap()
    }
}

/// Logs `lines` lines through the server's pipeline (a queue, the log thread, a buffer and a
/// lingering flush), one every `every`, and waits for the log thread to finish. Returns how
/// long that took.
fn log_through_the_pipeline(output: &Chunks, lines: usize, every: Duration) -> Duration {
    let started = Instant::now();
    let (mut writer, guard) = NonBlockingBuilder::default()
        .lossy(false)
        .finish(Lingering::new(
            BufWriter::with_capacity(1 << 20, output.clone()),
            LINGER,
        ));
    for line in 0..lines {
        writer
            .write_all(format!("line {line}\n").as_bytes())
            .unwrap();
        std::thread::sleep(every);
    }
    drop(guard);
    started.elapsed()
}

#[test]
fn a_stream_of_lines_leaves_in_one_write_per_linger() {
    let output = Chunks::default();
    let took = log_through_the_pipeline(&output, 300, Duration::from_micros(300));
    // Every write follows a wait of LINGER; without it the log thread wrote after every line
    // or few, as each one woke it.
    let bound = (took.as_nanos() / LINGER.as_nanos()) as usize + 1;
    assert!(
        output.writes() <= bound,
        "{} writes in {took:?}, at most {bound} expected",
        output.writes()
    );
}

#[test]
fn every_line_reaches_the_output_in_order() {
    let output = Chunks::default();
    log_through_the_pipeline(&output, 1_000, Duration::ZERO);
    let expected: String = (0..1_000).map(|line| format!("line {line}\n")).collect();
    assert_eq!(output.text(), expected);
}

#[test]
fn a_flush_with_nothing_written_does_not_wait() {
    let mut writer = Lingering::new(Chunks::default(), Duration::from_secs(60));
    let started = Instant::now();
    writer.flush().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_lone_line_is_written_once_its_linger_is_over() {
    let output = Chunks::default();
    let mut writer = Lingering::new(BufWriter::new(output.clone()), Duration::from_millis(50));
    writer.write_all(b"registered\n").unwrap();
    assert_eq!(output.writes(), 0, "held in the buffer until the flush");
    let started = Instant::now();
    writer.flush().unwrap();
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!(output.text(), "registered\n");
}
