//! How the estimate's notes speak of many things at once: a few names and a count of the rest,
//! and a count of running pods with the words that agree with it.

/// The names a note lists before it counts the rest.
const MAX_NAMED: usize = 5;

/// The distinct `names`, sorted, the first five by name and the rest counted (`a, b, c, d, e and
/// 3 more`).
pub(crate) fn some_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    match names.len() {
        n if n > MAX_NAMED => format!("{} and {} more", names[..MAX_NAMED].join(", "), n - MAX_NAMED),
        _ => names.join(", "),
    }
}

/// `count` running pods, with the words a sentence about them needs.
pub(crate) struct RunningPods {
    /// `1 running pod`, `3 running pods`.
    pub count: String,
    /// `it keeps`, `they keep`.
    pub they_keep: &'static str,
    /// `it cannot`, `none of them can`.
    pub none_can: &'static str,
}

pub(crate) fn running_pods(count: usize) -> RunningPods {
    match count {
        1 => RunningPods {
            count: "1 running pod".to_owned(),
            they_keep: "it keeps",
            none_can: "it cannot",
        },
        n => RunningPods {
            count: format!("{n} running pods"),
            they_keep: "they keep",
            none_can: "none of them can",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_names_are_listed_and_the_rest_counted() {
        assert_eq!(some_of(["b", "a", "b"]), "a, b");
        let many = ["g", "f", "e", "d", "c", "b", "a"];
        assert_eq!(some_of(many), "a, b, c, d, e and 2 more");
    }

    #[test]
    fn one_pod_reads_in_the_singular() {
        let one = running_pods(1);
        assert_eq!(
            (one.count.as_str(), one.they_keep, one.none_can),
            ("1 running pod", "it keeps", "it cannot")
        );
        assert_eq!(running_pods(3).count, "3 running pods");
    }
}
