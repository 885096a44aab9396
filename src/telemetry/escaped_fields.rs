//! The field writer of the human log format: every field value and message with its control
//! characters escaped, so no text (upstream's above all) can start a line of its own.
//!
//! A short-video `statusMsg` holding `"\n2026-01-01T00:00:00Z  INFO forged line"` once reached
//! the log through a `%`-formatted field and printed as a second, forged line. Escaping here,
//! where every field of every event and span is written, means no call site can forget it.
//! (The JSON format needs none of this: a JSON string cannot hold a raw control character.)

use std::fmt::{self, Write};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::Writer;

/// `name=value` fields separated by spaces, the message first and bare, control characters
/// (and the Unicode line and paragraph separators) written as escapes.
#[derive(Clone, Copy, Debug, Default)]
pub struct EscapedFields;

impl<'writer> FormatFields<'writer> for EscapedFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let mut visitor = FieldVisitor {
            out: Escaper(writer),
            first: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct FieldVisitor<'writer> {
    out: Escaper<Writer<'writer>>,
    first: bool,
    result: fmt::Result,
}

impl FieldVisitor<'_> {
    fn write(&mut self, field: &Field, value: fmt::Arguments<'_>) {
        let name = field.name();
        // `log.*` fields are the `log` crate's metadata, already shown as the target and level.
        if self.result.is_err() || name.starts_with("log.") {
            return;
        }
        let separator = if std::mem::take(&mut self.first) {
            ""
        } else {
            " "
        };
        self.result = if name == "message" {
            // The field writer sees only the escaping adaptor, never the raw writer.
            write!(self.out.0, "{separator}").and_then(|()| self.out.write_fmt(value))
        } else {
            let name = name.strip_prefix("r#").unwrap_or(name);
            write!(self.out.0, "{separator}{name}=").and_then(|()| self.out.write_fmt(value))
        };
    }
}

impl Visit for FieldVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.write(field, format_args!("{value}"));
        } else {
            self.write(field, format_args!("{value:?}"));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.write(field, format_args!("{value:?}"));
    }
}

/// Writes what it is given with control characters escaped.
struct Escaper<W>(W);

impl<W: Write> Write for Escaper<W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut rest = s;
        while let Some(at) = rest.find(needs_escape) {
            let c = rest[at..].chars().next().unwrap_or_default();
            self.0.write_str(&rest[..at])?;
            match c {
                '\n' => self.0.write_str("\\n")?,
                '\r' => self.0.write_str("\\r")?,
                '\t' => self.0.write_str("\\t")?,
                other => write!(self.0, "\\u{{{:x}}}", u32::from(other))?,
            }
            rest = &rest[at + c.len_utf8()..];
        }
        self.0.write_str(rest)
    }
}

/// Characters that could end a line, move the cursor or change a terminal's state.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &str) -> String {
        let mut out = Escaper(String::new());
        out.write_str(s).unwrap();
        out.0
    }

    #[test]
    fn control_characters_are_escaped_and_the_rest_is_kept() {
        assert_eq!(escaped("a\nb\r\tc"), "a\\nb\\r\\tc");
        assert_eq!(escaped("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(
            escaped("x\u{85}y\u{2028}z\u{7f}"),
            "x\\u{85}y\\u{2028}z\\u{7f}"
        );
        assert_eq!(escaped("plain é ✓"), "plain é ✓");
    }
}
