//! `kubectl suture eval`: compile one CEL expression in the admission environment and evaluate
//! it against objects, a request, params and a namespace, as a policy would.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::{Args, ValueEnum};
use policies_cel::cel::value::{display, from_json, to_json, type_name};
use policies_cel::cel::{AuthorizerMode, Bindings, Budget, CompileError, Env, Root, Value, authorizer_value};
use serde::Serialize;
use serde_json::{Value as Json, json};

use crate::exit::{Exit, Failure, OrExit};
use crate::policies::TargetVersion;
use crate::review::{self, RequestSpec};
use crate::style::Style;
use crate::{cluster, input};

/// Output formats of `eval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum EvalOutput {
    #[default]
    Text,
    Json,
}

/// How the offline `authorizer` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum AuthorizerArg {
    /// Every `check()` is allowed
    #[default]
    Allow,
    /// Every `check()` is denied
    Deny,
}

/// Arguments of `kubectl suture eval`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct EvalArgs {
    /// The CEL expression
    #[arg(short = 'e', long = "expression", value_name = "EXPR")]
    pub expression: String,

    /// `object` (YAML or JSON; `-` reads stdin)
    #[arg(long = "object", value_name = "FILE")]
    pub object: Option<PathBuf>,

    /// `oldObject`
    #[arg(long = "old-object", value_name = "FILE")]
    pub old_object: Option<PathBuf>,

    /// `request`: an AdmissionRequest, or a whole AdmissionReview (then object and oldObject come
    /// from it unless given)
    #[arg(long = "request", value_name = "FILE")]
    pub request: Option<PathBuf>,

    /// `params`
    #[arg(long = "params", value_name = "FILE")]
    pub params: Option<PathBuf>,

    #[command(flatten)]
    pub target: TargetVersion,

    /// `namespaceObject`
    #[arg(long = "namespace-object", value_name = "FILE")]
    pub namespace_object: Option<PathBuf>,

    /// How `authorizer` checks answer
    #[arg(long = "authorizer", value_enum, default_value_t)]
    pub authorizer: AuthorizerArg,

    /// Cluster snapshot file or directory (snapshots arrive with the cluster model)
    #[arg(long = "cluster", value_name = "PATH")]
    pub cluster: Vec<PathBuf>,

    /// Output format: the value, or {"value", "type"} / {"error"}
    #[arg(short = 'o', long = "output", value_enum, default_value_t)]
    pub output: EvalOutput,
}

const HELP: &str = "\
Without --request, `request` is built from the objects as kube-apiserver would (operation CREATE with
--object, UPDATE with both, DELETE with --old-object; user `admin`).

Examples:
  # A boolean rule against a Deployment
  kubectl suture eval -e 'object.spec.replicas > 2' --object deployment.yaml

  # Compare old and new objects
  kubectl suture eval -e 'object.spec.replicas - oldObject.spec.replicas' \\
      --object sts-new.yaml --old-object sts-old.yaml

  # Everything from a recorded AdmissionReview, as JSON
  kubectl suture eval -e 'request.userInfo.username' --request review.json -o json

Exit status:
  0  the value was printed
  1  the expression failed at evaluation
  2  usage error or unreadable input
  3  the expression does not compile";

/// Runs `eval`.
pub fn run(args: &EvalArgs, no_color: bool) -> Result<Exit, Failure> {
    let inputs = [
        &args.object,
        &args.old_object,
        &args.request,
        &args.params,
        &args.namespace_object,
    ];
    if inputs
        .iter()
        .filter(|p| p.as_deref().is_some_and(input::is_stdin))
        .count()
        > 1
    {
        return Err(Failure::usage(anyhow!(
            "only one input can be read from stdin (-)"
        )));
    }
    let (bindings, request) = bindings(args)?;
    let cluster = cluster::load(&args.cluster, policies_cel::operators::catalog())?;
    let view = cluster.as_ref();
    let has_model = view.object_count() > 0;
    // `impact` needs the request as an AdmissionReview and a model to estimate against.
    let review = request.filter(|_| has_model).and_then(|request| {
        policies_cel::Request::from_review(json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request
        }))
        .ok()
    });
    let estimate = || match &review {
        Some(review) => Ok(policies_cel::impact::estimate(review, view).to_value()),
        None => Err(policies_cel::cel::EvalError::Unavailable(
            "impact (give --cluster and a --request, or objects to build one from)".into(),
        )),
    };
    let mut bindings = bindings.with_impact(&estimate);
    if has_model {
        bindings = bindings.with_cluster(view);
    }

    let program = match Env::admission_at(args.target.kubernetes_version).compile(&args.expression) {
        Ok(program) => program,
        Err(error) => return compile_failed(&error, args.output, no_color),
    };
    match (program.eval(&bindings, &Budget::default()), args.output) {
        (Ok(value), EvalOutput::Text) => println!("{}", render_text(&value)),
        (Ok(value), EvalOutput::Json) => print_json(&EvalResult {
            value: to_json(&value),
            r#type: type_name(&value),
        }),
        (Err(error), EvalOutput::Text) => return Err(Failure::failed(anyhow!("evaluation failed: {error}"))),
        (Err(error), EvalOutput::Json) => {
            print_json(&json!({"error": error.to_string()}));
            return Ok(Exit::Failure);
        }
    }
    Ok(Exit::Success)
}

fn compile_failed(error: &CompileError, output: EvalOutput, no_color: bool) -> Result<Exit, Failure> {
    if output == EvalOutput::Json {
        print_json(&json!({"error": error.render()}));
        return Ok(Exit::Policy);
    }
    let fancy = Style::for_stderr(no_color).is_colored();
    let mut rendered = String::new();
    if !fancy
        || miette::GraphicalReportHandler::new()
            .render_report(&mut rendered, error)
            .is_err()
    {
        rendered = error.render();
    }
    Err(Failure::policy(anyhow!("the expression does not compile")).with_rendered(rendered))
}

/// `-o json` of a value: `{"value": ..., "type": "..."}`.
#[derive(Debug, Serialize)]
struct EvalResult {
    value: Json,
    r#type: String,
}

fn print_json(value: &impl Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(error) => eprintln!("error: cannot write JSON: {error}"),
    }
}

/// The value as text: scalars in CEL literal syntax, lists and maps as indented JSON.
pub fn render_text(value: &Value) -> String {
    match value {
        Value::List(_) | Value::Map(_) => {
            let json = to_json(value);
            serde_json::to_string_pretty(&json).unwrap_or_else(|_| json.to_string())
        }
        other => display(other),
    }
}

fn read(path: &Path) -> Result<Json, Failure> {
    input::read_one(path).or_exit(Exit::Usage)
}

/// The activation: every root the arguments give, `request` built when not given (also returned
/// with its objects, for the impact estimate).
fn bindings(args: &EvalArgs) -> Result<(Bindings<'static>, Option<Json>), Failure> {
    let mut object = args.object.as_deref().map(read).transpose()?;
    let mut old_object = args.old_object.as_deref().map(read).transpose()?;
    let request = match &args.request {
        Some(path) => {
            let mut request = request_from_file(path)?;
            if let Some(fields) = request.as_object_mut() {
                object = object.or_else(|| fields.get("object").cloned().filter(|o| !o.is_null()));
                old_object = old_object.or_else(|| fields.get("oldObject").cloned().filter(|o| !o.is_null()));
            }
            request
        }
        None => synthesized_request(object.as_ref(), old_object.as_ref()),
    };
    let mut full_request = request.clone();
    if let Some(fields) = full_request.as_object_mut() {
        fields.insert("object".into(), object.clone().unwrap_or(Json::Null));
        fields.insert("oldObject".into(), old_object.clone().unwrap_or(Json::Null));
    }
    let mut bindings = Bindings::new()
        .with(Root::Object, object.as_ref().map_or(Value::Null, from_json))
        .with(
            Root::OldObject,
            old_object.as_ref().map_or(Value::Null, from_json),
        )
        .with(Root::Request, from_json(&request_variable(request)))
        .with(
            Root::Authorizer,
            authorizer_value(match args.authorizer {
                AuthorizerArg::Allow => AuthorizerMode::Allow,
                AuthorizerArg::Deny => AuthorizerMode::Deny,
            }),
        );
    if let Some(path) = &args.params {
        bindings.set(Root::Params, from_json(&read(path)?));
    }
    if let Some(path) = &args.namespace_object {
        bindings.set(Root::NamespaceObject, from_json(&read(path)?));
    }
    Ok((bindings, full_request.is_object().then_some(full_request)))
}

/// Reads `--request`: an AdmissionRequest, or an AdmissionReview whose `request` is taken.
fn request_from_file(path: &Path) -> Result<Json, Failure> {
    let source = input::read_source(path).or_exit(Exit::Usage)?;
    let document = input::parse_one(&source).or_exit(Exit::Usage)?;
    let invalid = |message: &str| Failure::usage(input::InputError::invalid(&source, message));
    if !document.is_object() {
        return Err(invalid(
            "expected an AdmissionRequest or an AdmissionReview (a mapping)",
        ));
    }
    let is_review = document.get("kind").and_then(Json::as_str) == Some("AdmissionReview")
        || (document.get("request").is_some() && document.get("operation").is_none());
    if !is_review {
        return Ok(document);
    }
    let api_version = document
        .get("apiVersion")
        .and_then(Json::as_str)
        .unwrap_or_default();
    if api_version != "admission.k8s.io/v1" {
        return Err(invalid(&format!(
            "expected an AdmissionReview of apiVersion admission.k8s.io/v1, found {:?}",
            api_version
        )));
    }
    match document.get("request") {
        Some(request) if request.is_object() => Ok(request.clone()),
        _ => Err(invalid("the AdmissionReview has no `request`")),
    }
}

/// The request kube-apiserver would send for these objects, or null when it cannot be told.
fn synthesized_request(object: Option<&Json>, old_object: Option<&Json>) -> Json {
    let spec = RequestSpec {
        seed: "kubectl suture eval".into(),
        object: object.cloned(),
        old_object: old_object.cloned(),
        ..RequestSpec::default()
    };
    review::build_request(&spec).unwrap_or(Json::Null)
}

/// The `request` variable: the AdmissionRequest without its objects (as policies see it).
fn request_variable(request: Json) -> Json {
    match request {
        Json::Object(mut fields) => {
            fields.remove("object");
            fields.remove("oldObject");
            fields.entry("dryRun").or_insert(Json::Bool(false));
            fields.entry("options").or_insert(Json::Null);
            Json::Object(fields)
        }
        other => other,
    }
}
