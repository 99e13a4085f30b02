//! The JUnit XML report of `test` (`testsuites` / `testsuite` / `testcase` / `failure`), the form
//! CI systems read. Written with quick-xml, which escapes text and attribute values.

use std::io;
use std::time::Duration;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

use crate::suite::{CaseResult, RunResult, SuiteResult};

/// The report as an XML document with a trailing newline.
pub fn render(result: &RunResult) -> io::Result<String> {
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let mut root = BytesStart::new("testsuites");
    root.push_attribute(("name", "kubectl-suture"));
    root.push_attribute(("tests", result.total().to_string().as_str()));
    root.push_attribute(("failures", result.failed().to_string().as_str()));
    root.push_attribute(("errors", "0"));
    root.push_attribute(("time", seconds(result.duration).as_str()));
    writer.write_event(Event::Start(root))?;
    for suite in &result.suites {
        write_suite(&mut writer, suite)?;
    }
    writer.write_event(Event::End(BytesEnd::new("testsuites")))?;
    let mut text = String::from_utf8(writer.into_inner()).map_err(io::Error::other)?;
    text.push('\n');
    Ok(text)
}

fn write_suite(writer: &mut Writer<Vec<u8>>, suite: &SuiteResult) -> io::Result<()> {
    let mut start = BytesStart::new("testsuite");
    start.push_attribute(("name", clean(&suite.name).as_str()));
    start.push_attribute(("tests", suite.cases.len().to_string().as_str()));
    start.push_attribute(("failures", suite.failed().to_string().as_str()));
    start.push_attribute(("errors", "0"));
    start.push_attribute(("skipped", "0"));
    start.push_attribute(("time", seconds(suite.duration).as_str()));
    start.push_attribute(("file", clean(&suite.file).as_str()));
    writer.write_event(Event::Start(start))?;
    for case in &suite.cases {
        write_case(writer, suite, case)?;
    }
    writer.write_event(Event::End(BytesEnd::new("testsuite")))?;
    Ok(())
}

fn write_case(writer: &mut Writer<Vec<u8>>, suite: &SuiteResult, case: &CaseResult) -> io::Result<()> {
    let mut start = BytesStart::new("testcase");
    start.push_attribute(("name", clean(&case.name).as_str()));
    start.push_attribute(("classname", clean(&suite.name).as_str()));
    start.push_attribute(("file", clean(&suite.file).as_str()));
    start.push_attribute(("time", seconds(case.duration).as_str()));
    if case.passed() {
        return writer.write_event(Event::Empty(start));
    }
    writer.write_event(Event::Start(start))?;
    let mut failure = BytesStart::new("failure");
    failure.push_attribute(("message", clean(&case.failures.join("; ")).as_str()));
    failure.push_attribute(("type", "ExpectationFailed"));
    writer.write_event(Event::Start(failure))?;
    writer.write_event(Event::Text(BytesText::new(&clean(&case.failures.join("\n")))))?;
    writer.write_event(Event::End(BytesEnd::new("failure")))?;
    writer.write_event(Event::End(BytesEnd::new("testcase")))?;
    Ok(())
}

fn seconds(duration: Duration) -> String {
    format!("{:.6}", duration.as_secs_f64())
}

/// Drops characters XML 1.0 cannot carry at all (control characters other than tab and newlines).
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        .collect()
}
