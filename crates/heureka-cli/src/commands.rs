//! One function per subcommand: the request it makes and what it prints.

use std::time::Duration;

use heureka_core::{Applications, InstanceStatus};
use heureka_wire::Format;
use reqwest::Method;
use serde_json::json;

use crate::args::{Cli, Command, MetadataCommand, StatusCommand, WireFormat};
use crate::error::CliError;
use crate::eureka::{Call, Eureka};
use crate::render;
use crate::tls::CliTls;
use crate::{sidecar, target, watch};

pub(crate) async fn run(cli: Cli, env: &dyn Fn(&str) -> Option<String>) -> Result<(), CliError> {
    let tls = CliTls::resolve(&cli.global, env)?;
    if let Command::Sidecar(args) = cli.command {
        if cli.global.namespace.is_some() {
            return Err(CliError::Usage(
                "sidecar: --namespace is not supported; give --eureka the namespace's URL \
                 (http://h:8761/ns/NAME/eureka/)"
                    .to_owned(),
            ));
        }
        return sidecar::run(args, &cli.global.eureka, &tls, env).await;
    }
    let mut servers = target::servers(&cli.global.eureka, env)?;
    if let Some(name) = &cli.global.namespace {
        servers = target::in_namespace(servers, &cli.global.namespace_prefix, name)?;
    }
    let format = match cli.global.format {
        WireFormat::Json => Format::Json,
        WireFormat::Xml => Format::Xml,
    };
    let eureka = Eureka::new(
        servers,
        format,
        Duration::from_secs_f64(cli.global.timeout),
        tls.rustls_config()?,
    )?;
    let json = cli.global.json;
    match cli.command {
        Command::Apps { wide } => apps(&eureka, wide, json).await,
        Command::App { name } => app(&eureka, &name, json).await,
        Command::Instance { id } => instance(&eureka, &id, json).await,
        Command::Status(StatusCommand::Set { app, id, status }) => {
            let value = status.as_str();
            let call = Call {
                method: Method::PUT,
                path: &["apps", &app, &id, "status"],
                query: &[("value", value)],
                what: format!("no instance {id} in {app}"),
            };
            write(&eureka, &call, json, json!({"status": value})).await?;
            say(json, &format!("{app}/{id}: status override set to {value}"));
            Ok(())
        }
        Command::Status(StatusCommand::Clear { app, id, value }) => {
            let value = value.map(InstanceStatus::as_str);
            let query: Vec<(&str, &str)> = value.iter().map(|value| ("value", *value)).collect();
            let call = Call {
                method: Method::DELETE,
                path: &["apps", &app, &id, "status"],
                query: &query,
                what: format!("no instance {id} in {app}"),
            };
            let status = value.unwrap_or(InstanceStatus::Unknown.as_str());
            write(&eureka, &call, json, json!({"status": status})).await?;
            say(json, &format!("{app}/{id}: status override removed"));
            Ok(())
        }
        Command::Metadata(MetadataCommand::Set { app, id, pairs }) => {
            let query: Vec<(&str, &str)> = pairs
                .iter()
                .map(|(key, value)| (key.as_str(), value.as_str()))
                .collect();
            let call = Call {
                method: Method::PUT,
                path: &["apps", &app, &id, "metadata"],
                query: &query,
                what: format!("no instance {id} in {app}"),
            };
            let metadata: serde_json::Map<String, serde_json::Value> = pairs
                .iter()
                .map(|(key, value)| (key.clone(), json!(value)))
                .collect();
            write(&eureka, &call, json, json!({"metadata": metadata})).await?;
            say(json, &format!("{app}/{id}: metadata updated"));
            Ok(())
        }
        Command::Deregister { app, id } => {
            let call = Call {
                method: Method::DELETE,
                path: &["apps", &app, &id],
                query: &[],
                what: format!("no instance {id} in {app}"),
            };
            write(&eureka, &call, json, json!({})).await?;
            say(json, &format!("{app}/{id}: deregistered"));
            Ok(())
        }
        Command::Watch(watch_args) => watch::run(&eureka, &watch_args, json).await,
        Command::Regions => {
            if format == Format::Xml {
                return Err(CliError::Usage(
                    "regions: the document is JSON only; leave out --format xml".to_owned(),
                ));
            }
            crate::regions::run(&eureka, json).await
        }
        Command::Drain {
            app,
            id,
            timeout,
            deregister,
        } => {
            let timeout = Duration::from_secs_f64(timeout);
            crate::drain::run(&eureka, &app, &id, timeout, deregister, json).await
        }
        Command::Sidecar(_) => unreachable!("answered before the servers are resolved"),
    }
}

async fn apps(eureka: &Eureka, wide: bool, json: bool) -> Result<(), CliError> {
    let apps = eureka.applications(&["apps", ""]).await?;
    if json {
        return print_document(heureka_wire::encode_applications(&apps, Format::Json));
    }
    if wide {
        print!("{}", wide_table(&apps));
    } else {
        print!("{}", render::applications_table(&apps.applications));
    }
    Ok(())
}

fn wide_table(apps: &Applications) -> String {
    let now = render::now_ms();
    let mut headers = vec!["APP"];
    headers.extend(render::INSTANCE_HEADERS);
    let mut rows = Vec::new();
    for app in render::sorted(&apps.applications) {
        for row in render::instance_rows(&app.instances, now) {
            rows.push(std::iter::once(app.name.clone()).chain(row).collect());
        }
    }
    render::table(&headers, &rows)
}

async fn app(eureka: &Eureka, name: &str, json: bool) -> Result<(), CliError> {
    let app = eureka.application(name).await?;
    if json {
        return print_document(heureka_wire::encode_application(&app, Format::Json));
    }
    let rows = render::instance_rows(&app.instances, render::now_ms());
    print!("{}", render::table(&render::INSTANCE_HEADERS, &rows));
    Ok(())
}

async fn instance(eureka: &Eureka, id: &str, json: bool) -> Result<(), CliError> {
    let instance = eureka.instance(id).await?;
    if json {
        return print_document(heureka_wire::encode_instance(&instance, Format::Json));
    }
    print!("{}", render::instance_details(&instance, render::now_ms()));
    Ok(())
}

/// A write: 2xx or the mapped error; with `--json`, one object naming the instance, what was
/// done and the status code, plus `extra`.
async fn write(
    eureka: &Eureka,
    call: &Call<'_>,
    json: bool,
    extra: serde_json::Value,
) -> Result<(), CliError> {
    let answer = eureka.expect_ok(call).await?;
    if json {
        let mut object = json!({
            "app": call.path[1],
            "id": call.path[2],
            "action": action_name(call),
            "httpStatus": answer.status().as_u16(),
        });
        if let (Some(object), serde_json::Value::Object(extra)) = (object.as_object_mut(), extra) {
            object.extend(extra);
        }
        println!("{object}");
    }
    Ok(())
}

fn action_name(call: &Call<'_>) -> &'static str {
    match (&call.method, call.path.get(3).copied()) {
        (&Method::PUT, Some("status")) => "status-set",
        (&Method::DELETE, Some("status")) => "status-cleared",
        (_, Some("metadata")) => "metadata-set",
        _ => "deregistered",
    }
}

/// The human confirmation of a write, on stdout; `--json` has printed its object instead.
fn say(json: bool, text: &str) {
    if !json {
        println!("{text}");
    }
}

fn print_document(document: Vec<u8>) -> Result<(), CliError> {
    println!("{}", String::from_utf8_lossy(&document));
    Ok(())
}
