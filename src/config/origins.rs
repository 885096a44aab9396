//! Where each value of the settings came from: the built-in defaults, a line of the config
//! file, or an environment variable. Errors name it, `check` prints it beside each value that
//! is not a default, and `serve`'s start-up summary lists the layers.
//!
//! The file is read once more with the `toml` crate's spans (the `config` crate keeps none),
//! which gives every key and list item its line.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::ConfigError;

/// Where one value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin<'a> {
    /// The built-in defaults (`config/default.toml`).
    Default,
    /// A line of the config file, named as given.
    File {
        /// The file as `--config` or `PROFILE_LOOKUP_CONFIG` named it.
        path: &'a str,
        /// The line (from 1).
        line: usize,
    },
    /// An environment variable, by name.
    Env(&'a str),
}

impl fmt::Display for Origin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("the built-in defaults"),
            Origin::File { path, line } => write!(f, "{path}:{line}"),
            Origin::Env(name) => f.write_str(name),
        }
    }
}

/// What one key of a TOML document holds, as far as the shape checks care.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Text, with the text.
    Text(String),
    /// A whole number.
    Integer,
    /// A number with a fraction.
    Float,
    /// `true` or `false`.
    Bool,
    /// A list.
    List,
    /// A table (a section).
    Table,
    /// A date or time.
    Datetime,
}

/// One key of a TOML document: its path (`["rate_limit", "burst"]`), line and kind.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The key's path from the top.
    pub path: Vec<String>,
    /// The line the key is written on.
    pub line: usize,
    /// What it holds.
    pub kind: Kind,
}

/// A TOML document's keys, in the order written, and the line of each key and list item by
/// dotted path (`upstream.proxies[1]`).
#[derive(Debug, Default)]
pub struct Document {
    /// Every key, tables included, in the order written.
    pub entries: Vec<Entry>,
    /// The line of each key and list item.
    lines: BTreeMap<String, usize>,
}

impl Document {
    /// Reads `text`; the error is the `toml` crate's, which names the line and column, or
    /// `line: why` for a whole number past TOML's (the `config` crate's own message for one
    /// names neither key nor line).
    pub fn parse(text: &str) -> Result<Self, String> {
        let table = DeTable::parse(text).map_err(|e| e.to_string())?;
        let mut document = Document::default();
        document.walk(text, &mut Vec::new(), table.get_ref())?;
        // The parser's tables are sorted by name: back into the order written.
        document.entries.sort_by_key(|e| e.line);
        Ok(document)
    }

    fn walk(
        &mut self,
        text: &str,
        path: &mut Vec<String>,
        table: &DeTable<'_>,
    ) -> Result<(), String> {
        for (key, value) in table {
            path.push(key.get_ref().to_string());
            let line = line_of(text, key);
            let kind = match value.get_ref() {
                DeValue::String(s) => Kind::Text(s.to_string()),
                DeValue::Integer(n) => {
                    let digits = n.as_str().replace('_', "");
                    if i64::from_str_radix(&digits, n.radix()).is_err() {
                        return Err(format!(
                            "{line}: {} = {} is past the largest whole number TOML holds \
                             ({})",
                            path.join("."),
                            n.as_str(),
                            i64::MAX
                        ));
                    }
                    Kind::Integer
                }
                DeValue::Float(_) => Kind::Float,
                DeValue::Boolean(_) => Kind::Bool,
                DeValue::Datetime(_) => Kind::Datetime,
                DeValue::Array(items) => {
                    for (at, item) in items.iter().enumerate() {
                        let item_line = line_of(text, item);
                        self.lines
                            .insert(format!("{}[{at}]", path.join(".")), item_line);
                    }
                    Kind::List
                }
                DeValue::Table(_) => Kind::Table,
            };
            self.lines.insert(path.join("."), line);
            self.entries.push(Entry {
                path: path.clone(),
                line,
                kind,
            });
            if let DeValue::Table(inner) = value.get_ref() {
                self.walk(text, path, inner)?;
            }
            path.pop();
        }
        Ok(())
    }
}

/// The line (from 1) where `spanned` begins in `text`.
fn line_of<T>(text: &str, spanned: &Spanned<T>) -> usize {
    let start = spanned.span().start.min(text.len());
    text.as_bytes()[..start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The layers a load read, each with what it set: where every value came from.
#[derive(Debug, Default)]
pub struct Sources {
    /// The config file as named, and its keys.
    file: Option<(String, Document)>,
    /// The environment variables set, by config path (`cache.ttl_seconds`), in name order.
    env: Vec<(String, String)>,
}

impl Sources {
    /// The file at `path` (already read into `text`) and the variables `env` (config path,
    /// name); a file that is not TOML is refused here, naming it.
    pub fn new(
        file: Option<(&Path, &str)>,
        mut env: Vec<(String, String)>,
    ) -> Result<Self, ConfigError> {
        let file = match file {
            None => None,
            Some((path, text)) => {
                let shown = path.display().to_string();
                // `{shown}:3: why` for a line of ours, `{shown}: TOML parse error at…`.
                let document = Document::parse(text).map_err(|e| {
                    let gap = if e.starts_with(|c: char| c.is_ascii_digit()) {
                        ""
                    } else {
                        " "
                    };
                    ConfigError::Invalid(format!("{shown}:{gap}{e}"))
                })?;
                Some((shown, document))
            }
        };
        env.sort_by(|a, b| a.1.cmp(&b.1));
        Ok(Self { file, env })
    }

    /// The config file's keys, when there is a file: its name and its document.
    pub fn file(&self) -> Option<(&str, &Document)> {
        self.file.as_ref().map(|(path, doc)| (path.as_str(), doc))
    }

    /// The environment variables set, as (config path, name).
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// Where the value at `key` (`upstream.proxies[1]`, `cache.ttl_seconds`) came from: the
    /// environment wins over the file, the file over the defaults. A list item is found by
    /// its list's variable, or its own line (else its list's).
    pub fn origin(&self, key: &str) -> Origin<'_> {
        let list = key.split('[').next().unwrap_or(key);
        if let Some((_, name)) = self.env.iter().find(|(path, _)| path == list) {
            return Origin::Env(name);
        }
        if let Some((path, doc)) = &self.file {
            let line = doc.lines.get(key).or_else(|| doc.lines.get(list));
            if let Some(&line) = line {
                return Origin::File { path, line };
            }
        }
        Origin::Default
    }

    /// The layers, for the start-up summary: `defaults`, the file's path, then each variable
    /// set.
    pub fn layers(&self) -> Vec<&str> {
        let mut layers = vec!["defaults"];
        layers.extend(self.file.as_ref().map(|(path, _)| path.as_str()));
        layers.extend(self.env.iter().map(|(_, name)| name.as_str()));
        layers
    }

    /// `err` with its message located as [`Sources::locate`] does.
    pub fn locate_error(&self, err: ConfigError) -> ConfigError {
        match err {
            ConfigError::Invalid(message) => ConfigError::Invalid(self.locate(&message)),
            ConfigError::Load(message) => ConfigError::Load(self.locate(&message)),
            other => other,
        }
    }

    /// `message` (which names a key near its start, as every check's does) prefixed with
    /// where that key was set; unchanged when it names none or the key is a default.
    pub fn locate(&self, message: &str) -> String {
        match first_key(message).map(|key| self.origin(key)) {
            Some(origin) if origin != Origin::Default => format!("{origin}: {message}"),
            _ => message.to_owned(),
        }
    }
}

/// The first word of `message` that is a dotted config key (`section.key`, maybe with a list
/// position: `upstream.proxies[0]`), among its first few words.
fn first_key(message: &str) -> Option<&str> {
    message
        .split([' ', ':', ',', '`', '(', ')'])
        .take(6)
        .find(|word| {
            let (section, rest) = match word.split_once('.') {
                Some(split) => split,
                None => return false,
            };
            let plain = |s: &str| {
                !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            };
            let rest = rest.split('[').next().unwrap_or(rest);
            plain(section) && rest.split('.').all(plain)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_and_list_item_has_its_line() {
        let text =
            "# c\n[cache]\nttl_seconds = 5\n\n[upstream]\nproxies = [\n  \"a\",\n  \"b\",\n]\n";
        let sources = Sources::new(
            Some((Path::new("c.toml"), text)),
            vec![("log.level".into(), "PROFILE_LOOKUP__LOG__LEVEL".into())],
        )
        .unwrap();
        let at = |key| sources.origin(key).to_string();
        assert_eq!(at("cache.ttl_seconds"), "c.toml:3");
        assert_eq!(at("cache"), "c.toml:2");
        assert_eq!(at("upstream.proxies"), "c.toml:6");
        assert_eq!(at("upstream.proxies[1]"), "c.toml:8");
        assert_eq!(at("log.level"), "PROFILE_LOOKUP__LOG__LEVEL");
        assert_eq!(sources.origin("cache.enabled"), Origin::Default);
        assert_eq!(
            sources.locate("upstream.proxies[1] (x): no port"),
            "c.toml:8: upstream.proxies[1] (x): no port"
        );
        assert_eq!(sources.locate("no API key is set"), "no API key is set");
        assert_eq!(
            sources.layers(),
            ["defaults", "c.toml", "PROFILE_LOOKUP__LOG__LEVEL"]
        );
    }

    #[test]
    fn a_file_that_is_not_toml_is_named_with_its_line() {
        let err = Sources::new(Some((Path::new("c.toml"), "[cache]\nx = \n")), vec![])
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.toml: TOML parse error at line 2"), "{err}");
    }
}
