//! The Kubernetes CEL libraries, with the examples of the Kubernetes documentation ("CEL in
//! Kubernetes", library tables) and of the libraries' own documentation: one test per library
//! family, then the errors bad input gives.

use crate::common;

use common::*;

use policies_cel::cel::value::{from_json, to_json};
use policies_cel::cel::{
    AuthorizerMode, Bindings, Env, EvalError, Root, Value, authorizer_for_request, authorizer_value,
};
use serde_json::json;

#[track_caller]
fn is_true_in(bindings: &Bindings, source: &str) {
    assert_eq!(eval_in(bindings, source), Ok(Value::Bool(true)), "{source}");
}

#[track_caller]
fn fails_in(source: &str, function: &str, message: &str) {
    assert_eq!(
        eval(source),
        Err(EvalError::Function {
            function: function.into(),
            message: message.into()
        }),
        "{source}"
    );
}

#[test]
fn lists_library() {
    // Kubernetes documentation examples.
    let object = json!({
        "names": ["a", "b", "c"],
        "items": [{"weight": 0.25}, {"weight": 0.75}],
        "lowPriorities": [{"priority": 1}, {"priority": 3}],
        "highPriorities": [{"priority": 5}, {"priority": 4}],
        "ordered": ["should-not-be-first", "should-be-first"],
    });
    let bindings = Bindings::new().with(Root::Object, from_json(&object));
    for source in [
        "object.names.isSorted()",
        "object.items.map(x, x.weight).sum() == 1.0",
        "object.lowPriorities.map(x, x.priority).max() < object.highPriorities.map(x, x.priority).min()",
        "object.ordered.indexOf('should-be-first') == 1",
    ] {
        assert_eq!(eval_in(&bindings, source), Ok(Value::Bool(true)), "{source}");
    }
    is_true("[1, 2, 3].isSorted()");
    is_false("[3, 1, 2].isSorted()");
    is_true("['a', 'b', 'b'].isSorted()");
    is_true("[].isSorted()");
    is("[1, 2, 3].sum()", Value::Int(6));
    is("[1u, 2u].sum()", Value::UInt(3));
    is("[1.5, 2.5].sum()", Value::Float(4.0));
    is("[].sum()", Value::Int(0));
    is_true("[duration('1s'), duration('1m')].sum() == duration('61s')");
    is("[3, 1, 2].min()", Value::Int(1));
    is("[3, 1, 2].max()", Value::Int(3));
    is("['b', 'c', 'a'].max()", string("c"));
    is("[1, 2, 3].indexOf(2)", Value::Int(1));
    is("[1, 2, 3].indexOf(4)", Value::Int(-1));
    is("['a', 'b', 'b', 'c'].lastIndexOf('b')", Value::Int(2));
    is("[1, 2, 3].lastIndexOf(9)", Value::Int(-1));
    fails_in("[].min()", "min", "cannot call min on empty list");
    assert_eq!(
        eval("[9223372036854775807, 1].sum()"),
        Err(EvalError::Overflow("sum"))
    );
}

#[test]
fn regex_library() {
    is("'abc 123'.find('[0-9]+')", string("123"));
    is("'abc'.find('[0-9]+')", string(""));
    is_true("'1, 2, 3, 4'.findAll('[0-9]+').map(x, int(x)).sum() < 100");
    is_json("'1, 2, 3, 4'.findAll('[0-9]+')", json!(["1", "2", "3", "4"]));
    is_json("'1, 2, 3, 4'.findAll('[0-9]+', 2)", json!(["1", "2"]));
    is_json("'abc'.findAll('[0-9]+')", json!([]));
    is_json("'1, 2, 3'.findAll('[0-9]+', -1)", json!(["1", "2", "3"]));
    is_json("'1, 2, 3'.findAll('[0-9]+', 0)", json!([]));
    // A literal pattern and one built at run time answer alike.
    is_true("'a1b22'.findAll('[0-9]+', 5) == 'a1b22'.findAll(string('[0-9]+'), 5)");
    is_true("'a1b22'.find('[0-9]+') == 'a1b22'.find(string('[0-9]+'))");
    assert!(matches!(
        eval("dyn(1).find('a')"),
        Err(EvalError::NoSuchOverload(_))
    ));
    // A pattern only known at run time is checked at run time.
    let bindings = Bindings::new().with(Root::Object, from_json(&json!({"pattern": "[", "text": "x"})));
    assert!(matches!(
        eval_in(&bindings, "object.text.find(object.pattern)"),
        Err(EvalError::Function { function, .. }) if function == "find"
    ));
    // A literal one at compile time.
    let error = Env::admission().compile("'x'.findAll('(', 1)").unwrap_err();
    assert_eq!(error.message, "invalid regular expression '(': unclosed group");
}

#[test]
fn url_library() {
    is(
        "url('https://example.com:80/').getHost()",
        string("example.com:80"),
    );
    is(
        "url('https://example.com/path with spaces/').getEscapedPath()",
        string("/path%20with%20spaces/"),
    );
    is(
        "url('https://user:pass@example.com:80/path?query=val#fragment').getScheme()",
        string("https"),
    );
    is("url('/absolute-path').getScheme()", string(""));
    is("url('https://example.com/').getHost()", string("example.com"));
    is("url('https://[::1]:80/').getHost()", string("[::1]:80"));
    is("url('https://[::1]/').getHost()", string("[::1]"));
    is("url('/path').getHost()", string(""));
    is(
        "url('https://example.com:80/').getHostname()",
        string("example.com"),
    );
    is("url('https://127.0.0.1:80/').getHostname()", string("127.0.0.1"));
    is("url('https://[::1]:80/').getHostname()", string("::1"));
    is("url('/path').getHostname()", string(""));
    is("url('https://example.com:80/').getPort()", string("80"));
    is("url('https://example.com/').getPort()", string(""));
    is("url('https://example.com:443/').getPort()", string("443"));
    is("url('/path').getPort()", string(""));
    is(
        "url('https://example.com/path').getEscapedPath()",
        string("/path"),
    );
    is("url('https://example.com').getEscapedPath()", string(""));
    is_json(
        "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()",
        json!({"k1": ["a"], "k2": ["b", "c"]}),
    );
    is_json(
        "url('https://example.com/path?key with spaces=value with spaces').getQuery()",
        json!({"key with spaces": ["value with spaces"]}),
    );
    is_json("url('https://example.com/path?').getQuery()", json!({}));
    is_json("url('https://example.com/path').getQuery()", json!({}));
    is_json(
        "url('https://example.com/?q=a+b&x=%2F').getQuery()",
        json!({"q": ["a b"], "x": ["/"]}),
    );
    is_true("isURL('https://user:pass@example.com:80/path?query=val#fragment')");
    is_true("isURL('/absolute-path')");
    is_false("isURL('https://a:b:c/')");
    is_false("isURL('../relative-path')");
    is_false("isURL('not a url')");
    is_true("url('https://example.com/a') == url('https://example.com/a')");
    is_false("url('https://example.com/a') == url('https://example.com/b')");
    is_true("type(url('https://example.com')) == kubernetes.URL");
    fails_in(
        "url('https://a:b:c/')",
        "url",
        "parse \"https://a:b:c/\": invalid port \":c\" after host",
    );
    fails_in(
        "url('../relative-path')",
        "url",
        "parse \"../relative-path\": invalid URI for request",
    );
}

fn authorizer_bindings(mode: AuthorizerMode) -> Bindings<'static> {
    Bindings::new().with(
        Root::Authorizer,
        authorizer_for_request(mode, "apps", "deployments", "", "prod", "web"),
    )
}

#[test]
fn authorizer_library() {
    let allow = authorizer_bindings(AuthorizerMode::Allow);
    let deny = authorizer_bindings(AuthorizerMode::Deny);
    for (source, allowed) in [
        (
            "authorizer.group('').resource('pods').namespace('default').check('create').allowed()",
            true,
        ),
        ("authorizer.path('/healthz').check('get').allowed()", true),
        (
            "authorizer.group('apps').resource('deployments').subresource('scale').namespace('prod').name('web').check('update').allowed()",
            true,
        ),
        (
            "authorizer.serviceAccount('default', 'myserviceaccount').group('apps').resource('deployments').check('delete').allowed()",
            true,
        ),
        ("authorizer.requestResource.check('update').allowed()", true),
        (
            "authorizer.requestResource.namespace('other').check('get').allowed()",
            true,
        ),
        (
            "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('app=web').check('list').allowed()",
            true,
        ),
        ("authorizer.requestResource.check('update').errored()", false),
    ] {
        let expected = if source.ends_with("errored()") {
            false
        } else {
            allowed
        };
        assert_eq!(
            eval_in(&allow, source),
            Ok(Value::Bool(expected)),
            "allow: {source}"
        );
        assert_eq!(eval_in(&deny, source), Ok(Value::Bool(false)), "deny: {source}");
    }
    assert_eq!(
        eval_in(
            &allow,
            "authorizer.group('').resource('pods').namespace('default').check('create').reason()"
        ),
        Ok(string("offline authorizer allows every request (verb create)"))
    );
    assert_eq!(
        eval_in(&deny, "authorizer.requestResource.check('update').reason()"),
        Ok(string("offline authorizer denies every request (verb update)"))
    );
    assert_eq!(
        eval_in(&deny, "authorizer.requestResource.check('update').error()"),
        Ok(string(""))
    );
    // A typical policy: only those who may update the scale subresource change replicas.
    let policy = "authorizer.group('apps').resource('deployments').subresource('scale').namespace('prod').name('web').check('update').allowed() ? 'ok' : 'denied'";
    assert_eq!(eval_in(&allow, policy), Ok(string("ok")));
    assert_eq!(eval_in(&deny, policy), Ok(string("denied")));
    assert_eq!(
        eval_in(
            &allow,
            "type(authorizer) == kubernetes.authorization.Authorizer && type(authorizer.requestResource) == kubernetes.authorization.ResourceCheck"
        ),
        Ok(Value::Bool(true))
    );
    // Methods in the wrong place are refused when the policy is created, and overload errors
    // when the receiver is known only at run time.
    assert_eq!(
        Env::admission()
            .compile("authorizer.check('get')")
            .unwrap_err()
            .message,
        "found no matching overload for 'check' applied to 'kubernetes.authorization.Authorizer.(string)'"
    );
    assert_eq!(
        eval_in(&allow, "dyn(authorizer).check('get')"),
        Err(EvalError::NoSuchOverload("check() on authorizer".into()))
    );
    assert_eq!(
        eval_in(&allow, "dyn(authorizer.path('/x')).allowed()"),
        Err(EvalError::NoSuchOverload("allowed() on path".into()))
    );
    // Each builder exists only on the type Kubernetes declares it for.
    assert_eq!(
        eval_in(&allow, "dyn(authorizer).resource('pods').check('get')"),
        Err(EvalError::NoSuchOverload("resource() on authorizer".into()))
    );
    assert_eq!(
        eval_in(
            &allow,
            "dyn(dyn(authorizer.group('')).namespace('x')).resource('pods')"
        ),
        Err(EvalError::NoSuchOverload("namespace() on group".into()))
    );
    is_true_in(
        &allow,
        "type(authorizer.group('apps')) == kubernetes.authorization.GroupCheck",
    );
    // Arguments are validated as Kubernetes' authz library validates them.
    for (source, message) in [
        ("authorizer.path('').check('get')", "path must not be empty"),
        ("authorizer.path('  ').check('get')", "path must not be empty"),
        (
            "authorizer.group('apps').resource(' ').check('get')",
            "resource must not be empty",
        ),
        (
            "authorizer.serviceAccount('default', 'My_SA').path('/x')",
            "Invalid service account name",
        ),
        (
            "authorizer.serviceAccount('Default', 'sa').path('/x')",
            "Invalid service account namespace",
        ),
        (
            "authorizer.serviceAccount('', 'sa').path('/x')",
            "Invalid service account namespace",
        ),
    ] {
        assert_eq!(
            eval_in(&allow, source),
            Err(EvalError::Other(message.into())),
            "{source}"
        );
    }
    is_true_in(
        &allow,
        "authorizer.serviceAccount('kube-system', 'replicaset-controller.v2').group('').resource('pods').check('delete').allowed()",
    );
    // The plain `authorizer` value (no request resource) answers the same way.
    let plain = Bindings::new().with(Root::Authorizer, authorizer_value(AuthorizerMode::Deny));
    assert_eq!(
        eval_in(&plain, "authorizer.path('/metrics').check('get').allowed()"),
        Ok(Value::Bool(false))
    );
}

#[test]
fn quantity_library() {
    is_true("quantity('500000G').isInteger()");
    is_false("quantity('500000000n').isInteger()");
    is_true("isQuantity('1.3G')");
    is_false("isQuantity('1.3Gi.5')");
    is("quantity('50k').asInteger()", Value::Int(50_000));
    is("quantity('1Ki').asInteger()", Value::Int(1024));
    let approximate =
        eval("quantity('9999999999999999999999999999999999999G').asApproximateFloat()").unwrap();
    assert!(
        matches!(approximate, Value::Float(f) if (f - 1e46).abs() / 1e46 < 1e-12),
        "{approximate:?}"
    );
    is("quantity('1.5').asApproximateFloat()", Value::Float(1.5));
    is("quantity('100m').asApproximateFloat()", Value::Float(0.1));
    is("quantity('50k').sign()", Value::Int(1));
    is("quantity('-50k').sign()", Value::Int(-1));
    is("quantity('0').sign()", Value::Int(0));
    is_true("quantity('50k').add(quantity('20k')) == quantity('70k')");
    is_true("quantity('50k').add(20) == quantity('50020')");
    is_true("quantity('50k').sub(quantity('20k')) == quantity('30k')");
    is_true("quantity('50k').sub(20) == quantity('49980')");
    is_true("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')");
    is_true("quantity('1Gi').isGreaterThan(quantity('1G'))");
    is_false("quantity('50M').isGreaterThan(quantity('50Mi'))");
    is_true("quantity('50M').isLessThan(quantity('50Mi'))");
    is("quantity('200M').compareTo(quantity('0.2G'))", Value::Int(0));
    is("quantity('50M').compareTo(quantity('50Mi'))", Value::Int(-1));
    is("quantity('50Mi').compareTo(quantity('50M'))", Value::Int(1));
    is_true("quantity('200M') == quantity('0.2G') && quantity('1Gi') == quantity('1024Mi')");
    is_true("type(quantity('1')) == kubernetes.Quantity");
    // As policies use it: containers' memory limits within bounds.
    let object = json!({"spec": {"containers": [
        {"resources": {"limits": {"memory": "512Mi"}}},
        {"resources": {"limits": {"memory": "1Gi"}}},
    ]}});
    let bindings = Bindings::new().with(Root::Object, from_json(&object));
    assert_eq!(
        eval_in(
            &bindings,
            "object.spec.containers.all(c, quantity(c.resources.limits.memory).isLessThan(quantity('2Gi')))"
        ),
        Ok(Value::Bool(true))
    );
    fails_in(
        "quantity('1.5').asInteger()",
        "asInteger",
        "quantity is not an integer",
    );
    fails_in(
        "quantity('9999999999999999999999999999999999999G').asInteger()",
        "asInteger",
        "quantity too large for integer",
    );
}

#[test]
fn sets_library() {
    is_true("sets.contains([], [])");
    is_true("sets.contains([1], [])");
    is_true("sets.contains([1, 2, 3, 4], [2, 3])");
    is_false("sets.contains([1, 2], [2, 3])");
    is_true("sets.contains([[1], [2]], [[2]])");
    is_true("sets.contains([1], [dyn(1.0), 1u])");
    is_true("sets.equivalent([], [])");
    is_true("sets.equivalent([1], [1, 1])");
    is_true("sets.equivalent([1], [dyn(1u), 1.0])");
    is_true("sets.equivalent([1, 2, 3], [dyn(3u), 2.0, 1])");
    is_false("sets.equivalent([1, 2], [2, 2, 2])");
    is_false("sets.intersects([1], [])");
    is_true("sets.intersects([1], [1, 2])");
    is_true("sets.intersects([[1], [2, 3]], [[1, 2], [2, dyn(3.0)]])");
    is_false("sets.intersects([1, 2], [3, 4])");
}

#[test]
fn ip_library() {
    is_true("isIP('127.0.0.1') && isIP('::1')");
    is_false("isIP('1.2.3.4.5')");
    is_false("isIP('127.0.0.1%eth0')");
    is_false("isIP('::ffff:1.2.3.4')");
    is_false("isIP('1.2.3.04')");
    is("ip('192.168.0.1').family()", Value::Int(4));
    is("ip('::1').family()", Value::Int(6));
    is_true("ip('127.0.0.1').isLoopback() && ip('::1').isLoopback()");
    is_false("ip('10.0.0.1').isLoopback()");
    is_true("ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()");
    is_true("ip('fe80::1').isLinkLocalUnicast() && ip('169.254.1.1').isLinkLocalUnicast()");
    is_true("ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()");
    is_true("ip('192.168.0.1').isGlobalUnicast() && ip('2001:db8::1').isGlobalUnicast()");
    is_false("ip('255.255.255.255').isGlobalUnicast()");
    is_true("ip.isCanonical('127.0.0.1') && ip.isCanonical('2001:db8::abcd')");
    is_false("ip.isCanonical('2001:DB8::ABCD')");
    is_false("ip.isCanonical('2001:db8:0::abcd')");
    is("string(ip('127.0.0.1'))", string("127.0.0.1"));
    is("string(ip('2001:DB8::1'))", string("2001:db8::1"));
    is_true("ip('127.0.0.1') == ip('127.0.0.1') && ip('::1') == ip('0:0::1')");
    is_false("ip('127.0.0.1') == ip('127.0.0.2')");
    is_true("type(ip('1.2.3.4')) == net.IP");
}

#[test]
fn cidr_library() {
    is_true("isCIDR('192.168.0.0/24') && isCIDR('::1/128')");
    is_false("isCIDR('192.168.0.0')");
    is_false("isCIDR('10.0.0.0/33')");
    is_true("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))");
    is_true("cidr('192.168.0.0/24').containsIP('192.168.0.1')");
    is_false("cidr('192.168.0.0/24').containsIP('192.168.1.1')");
    is_false("cidr('10.0.0.0/8').containsIP('::1')");
    is_true("cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))");
    is_true("cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')");
    is_false("cidr('192.168.10.0/24').containsCIDR('192.168.0.0/16')");
    is_true("cidr('192.168.0.0/24').ip() == ip('192.168.0.0')");
    is_true("cidr('192.168.0.1/24').ip() == ip('192.168.0.1')");
    is_true("cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')");
    is("string(cidr('10.1.2.3/8').masked())", string("10.0.0.0/8"));
    is("cidr('192.168.0.0/24').prefixLength()", Value::Int(24));
    is("cidr('::1/128').ip().family()", Value::Int(6));
    is("string(cidr('10.0.0.0/8'))", string("10.0.0.0/8"));
    is_true("type(cidr('10.0.0.0/8')) == net.CIDR");
    // As policies use it: every pod CIDR inside the cluster range.
    let object = json!({"spec": {"podCIDRs": ["10.244.1.0/24", "10.244.2.0/24"]}});
    let bindings = Bindings::new().with(Root::Object, from_json(&object));
    assert_eq!(
        eval_in(
            &bindings,
            "object.spec.podCIDRs.all(c, cidr('10.244.0.0/16').containsCIDR(c))"
        ),
        Ok(Value::Bool(true))
    );
}

#[test]
fn format_library() {
    let object =
        json!({"metadata": {"name": "my-name"}, "spec": {"format": "dns1123Label", "value": "Not_Valid"}});
    let bindings = Bindings::new().with(Root::Object, from_json(&object));
    assert_eq!(
        eval_in(
            &bindings,
            "!format.dns1123Label().validate(object.metadata.name).hasValue()"
        ),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval_in(
            &bindings,
            "format.named(object.spec.format).value().validate(object.spec.value).value()"
        )
        .map(|v| to_json(&v)),
        Ok(json!([
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and \
             end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ]))
    );
    is_true("format.named('dns1123Label').hasValue()");
    is_false("format.named('noSuchFormat').hasValue()");
    is_true("type(format.uri()) == kubernetes.NamedFormat");
    for valid in [
        "format.dns1123Label().validate('my-label-name')",
        "format.dns1123Subdomain().validate('apiextensions.k8s.io')",
        "format.dns1035Label().validate('my-label-name')",
        "format.qualifiedName().validate('apiextensions.k8s.io/v1beta1')",
        "format.dns1123LabelPrefix().validate('my-label-prefix-')",
        "format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-')",
        "format.dns1035LabelPrefix().validate('my-label-prefix-')",
        "format.labelValue().validate('my_value')",
        "format.labelValue().validate('')",
        "format.uri().validate('http://example.com')",
        "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000')",
        "format.byte().validate('aGVsbG8=')",
        "format.date().validate('2021-01-01')",
        "format.datetime().validate('2021-01-01T00:00:00Z')",
    ] {
        is_false(&format!("{valid}.hasValue()"));
    }
    is_json(
        "format.dns1123Label().validate('a.b').value()",
        json!(["must not contain dots"]),
    );
    is_json(
        "format.dns1035Label().validate('1abc').value()",
        json!([
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic \
             character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for \
             validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        ]),
    );
    is_json(
        &format!(
            "format.dns1123Label().validate('{}').value().size()",
            "a".repeat(64)
        ),
        json!(1),
    );
    is_json(
        &format!("format.dns1123Label().validate('{}').value()[0]", "a".repeat(64)),
        json!("must be no more than 63 characters"),
    );
    is_json(
        "format.qualifiedName().validate('/name').value()",
        json!(["prefix part must be non-empty"]),
    );
    is_json(
        "format.uri().validate('not a uri').value()",
        json!(["parse \"not a uri\": invalid URI for request"]),
    );
    is_json(
        "format.uuid().validate('nope').value()",
        json!(["does not match the UUID format"]),
    );
    is_json("format.byte().validate('!!').value()", json!(["invalid base64"]));
    is_json(
        "format.date().validate('2021-02-30').value()",
        json!(["invalid date"]),
    );
    is_json(
        "format.datetime().validate('2021-01-01').value()",
        json!(["invalid datetime"]),
    );
}

#[test]
fn semver_library() {
    is_true("isSemver('1.0.0')");
    is_true("isSemver('1.2.3-beta.1+build.7')");
    is_false("isSemver('v1.0')");
    is_false("isSemver('01.0.0')");
    is_true("isSemver('v1.0', true)");
    is_true("isSemver('v01.02.03', true)");
    is("semver('1.2.3').major()", Value::Int(1));
    is("semver('1.2.3').minor()", Value::Int(2));
    is("semver('1.2.3').patch()", Value::Int(3));
    is("semver('v1.02', true).minor()", Value::Int(2));
    is("semver('v1', true).patch()", Value::Int(0));
    is("semver('1.0.0').compareTo(semver('1.2.3'))", Value::Int(-1));
    is("semver('1.2.3').compareTo(semver('1.2.3'))", Value::Int(0));
    is("semver('2.0.0').compareTo(semver('1.9.9'))", Value::Int(1));
    is_true("semver('1.2.3').isGreaterThan(semver('1.0.0'))");
    is_false("semver('1.2.3').isLessThan(semver('1.0.0'))");
    is_true("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))");
    is_true("semver('1.0.0-alpha.2').isLessThan(semver('1.0.0-alpha.10'))");
    is_true("semver('1.2.3') == semver('1.2.3')");
    is_false("semver('1.2.3-alpha') == semver('1.2.3')");
    // Build metadata never affects precedence.
    is_true("semver('1.2.3+build.1') == semver('1.2.3')");
    is_false("semver('v1.28.3+k3s2', true).isGreaterThan(semver('v1.28.3+k3s1', true))");
    is(
        "semver('1.28.3+k3s2').compareTo(semver('1.28.3+k3s1'))",
        Value::Int(0),
    );
    is_true("type(semver('1.0.0')) == kubernetes.Semver");
}

#[test]
fn lists_extension() {
    is_json("lists.range(3)", json!([0, 1, 2]));
    is_json("[dyn(1), [2, dyn([3])]].flatten()", json!([1, 2, [3]]));
    is_json("[3, 1, 2].sort()", json!([1, 2, 3]));
    is_json("[1, 1, 2].distinct()", json!([1, 2]));
    is_json("[1, 2, 3, 4].slice(1, 3)", json!([2, 3]));
    is_json("[1, 2, 3].reverse()", json!([3, 2, 1]));
}

#[test]
fn bad_input_is_an_evaluation_error() {
    fails_in("quantity('1.5.5')", "quantity", "invalid number: '1.5.5'");
    fails_in(
        "cidr('10.0.0.0/33')",
        "cidr",
        "invalid CIDR: invalid IP address syntax",
    );
    fails_in(
        "ip('999.1.1.1')",
        "ip",
        "invalid IP address: invalid IP address syntax",
    );
    fails_in(
        "url('not a url')",
        "url",
        "parse \"not a url\": invalid URI for request",
    );
    fails_in("semver('x')", "semver", "No Major.Minor.Patch elements found");
    fails_in("semver('1.2')", "semver", "No Major.Minor.Patch elements found");
    fails_in(
        "semver('01.2.3')",
        "semver",
        "Major number must not contain leading zeroes \"01\"",
    );
    fails_in("semver('1.2.3-')", "semver", "Prerelease is empty");
    assert_eq!(
        eval("ip('1.2.3.4').family() + dyn('x')"),
        Err(EvalError::NoSuchOverload("int + string".into()))
    );
    // Wrong argument counts are compile errors.
    let error = Env::admission().compile("semver('1.0.0').major(1)").unwrap_err();
    assert_eq!(
        error.message,
        "found no matching overload for 'major' applied to 'kubernetes.Semver.(int)'"
    );
    assert_eq!(error.line_col(), (1, 17));
    let error = Env::admission()
        .compile("url('https://example.com').getPort(1)")
        .unwrap_err();
    assert_eq!(
        error.message,
        "found no matching overload for 'getPort' applied to 'kubernetes.URL.(int)'"
    );
    // Library functions on the wrong types are overload errors, not crashes.
    assert_eq!(
        eval("dyn('x').getHost()"),
        Err(EvalError::NoSuchOverload("getHost on string".into()))
    );
    assert_eq!(
        eval("dyn(1).major()"),
        Err(EvalError::NoSuchOverload("major on int".into()))
    );
    assert_eq!(
        eval("semver('1.0.0').compareTo(dyn(1))"),
        Err(EvalError::NoSuchOverload("compareTo on int".into()))
    );
    assert!(
        matches!(eval("dyn('x').compareTo(dyn('y'))"), Err(EvalError::Function { function, .. }) if function == "compareTo")
    );
    assert_eq!(
        eval("format.uri().validate(dyn(1))"),
        Err(EvalError::NoSuchOverload(
            "validate(int) on kubernetes.NamedFormat".into()
        ))
    );
}
