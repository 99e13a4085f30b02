//! JSON written by hand for the two documents the gateway writes for every judged request — the
//! AdmissionReview answer ([`crate::admission::review::ReviewResponse::to_json`]) and the
//! decision-log line ([`crate::decision_log::DecisionRecord::write_json`]) — byte for byte what
//! serde_json writes for them (their tests compare), without serde's machinery: keys are written
//! as the constants they are, and strings are escaped eight bytes at a time, where serde_json
//! looks every byte up in a table (a denial message is hundreds of bytes; together the two
//! documents were about 4% of a judged scale-down's instructions).

use policies_cel::eval::swar::{bytes_below, bytes_equal, first_stop};

/// The bytes of `word` JSON escapes in a string: a control character, a quote, a backslash.
const fn escaped_bytes(word: u64) -> u64 {
    bytes_below(word, 0x20) | bytes_equal(word, b'"') | bytes_equal(word, b'\\')
}

/// `text` as a JSON string, quoted and escaped as serde_json escapes it (`\"`, `\\`, the short
/// escapes of `\b \f \n \r \t`, `\u00xx` for the other control characters; nothing else).
pub fn string(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut written = 0;
    let mut at = 0;
    loop {
        // Eight bytes at a time to the next byte to escape, then one at a time near the end.
        at = first_stop(bytes, at, escaped_bytes);
        while bytes.get(at).is_some_and(|&byte| !needs_escape(byte)) {
            at += 1;
        }
        let Some(&byte) = bytes.get(at) else {
            break;
        };
        out.extend_from_slice(bytes.get(written..at).unwrap_or_default());
        escape(out, byte);
        at += 1;
        written = at;
    }
    out.extend_from_slice(bytes.get(written..).unwrap_or_default());
    out.push(b'"');
}

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

fn escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => Some(b'"'),
        b'\\' => Some(b'\\'),
        0x08 => Some(b'b'),
        0x0c => Some(b'f'),
        b'\n' => Some(b'n'),
        b'\r' => Some(b'r'),
        b'\t' => Some(b't'),
        _ => None,
    };
    match short {
        Some(letter) => out.extend_from_slice(&[b'\\', letter]),
        None => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ]),
    }
}

/// `"key":`, for a key that needs no escape (the documents' own field names).
pub fn key(out: &mut Vec<u8>, key: &str) {
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

/// `,"key":`.
pub fn next_key(out: &mut Vec<u8>, name: &str) {
    out.push(b',');
    key(out, name);
}

/// An unsigned integer.
pub fn number(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// `true` or `false`.
pub fn boolean(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

/// A list of strings.
pub fn strings<'s>(out: &mut Vec<u8>, items: impl IntoIterator<Item = &'s str>) {
    out.push(b'[');
    for (index, item) in items.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        string(out, item);
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(text: &str) -> String {
        let mut out = Vec::new();
        string(&mut out, text);
        String::from_utf8(out).unwrap()
    }

    /// Every string escapes as serde_json escapes it, whatever the byte's place in a word.
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut cases: Vec<String> = vec![
            String::new(),
            "plain".into(),
            "exactly8".into(),
            "a longer plain text, past a few words".into(),
            "é ü 😀 日本".into(),
            "\u{7f}/<>&'".into(),
        ];
        for byte in (0u8..0x20).chain([b'"', b'\\']) {
            let c = char::from(byte);
            for place in 0..20 {
                let mut text: String = "x".repeat(place);
                text.push(c);
                text.push_str("yz😀");
                cases.push(text);
            }
            cases.push(format!("{c}{c}{c}"));
        }
        for text in &cases {
            assert_eq!(written(text), serde_json::to_string(text).unwrap(), "{text:?}");
        }
    }
}
