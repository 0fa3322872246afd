//! Checks that a JSON Schema stays inside the elicitation subset (MCP 2025-11-25 and 2026-07-28
//! `ElicitRequest.requestedSchema`): a flat object whose properties are strings (with
//! `format`, `minLength`, `maxLength`), numbers/integers (with `minimum`, `maximum`), booleans,
//! or enums (single: `enum`/`oneOf`; multi: `type: "array"` with `items.enum`/`items.anyOf`).
//! A form nobody could fill in (an empty enum, `minimum` above `maximum`, ...) is refused too: the
//! human would only be able to decline it.

use serde_json::Value;

/// Returns `Err(reason)` when `schema` is not an elicitation form schema, or when one of its
/// properties has no valid value at all (see [`check_satisfiable`]).
pub fn check_elicitation_schema(schema: &Value) -> Result<(), String> {
    let obj = schema
        .as_object()
        .ok_or("requestedSchema must be an object")?;
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err("requestedSchema.type must be \"object\"".into());
    }
    let props = match obj.get("properties") {
        None => return Ok(()),
        Some(Value::Object(p)) => p,
        Some(_) => return Err("requestedSchema.properties must be an object".into()),
    };
    for (name, prop) in props {
        let ty = prop.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "string" | "number" | "integer" | "boolean" => {}
            "array" => {
                let items = prop
                    .get("items")
                    .ok_or(format!("property {name:?}: arrays need items"))?;
                if items.get("enum").is_none() && items.get("anyOf").is_none() {
                    return Err(format!("property {name:?}: array items must be an enum"));
                }
            }
            other => {
                return Err(format!(
                    "property {name:?}: type {other:?} is not allowed in a form"
                ));
            }
        }
        check_satisfiable(prop).map_err(|why| format!("property {name:?}: {why}"))?;
    }
    if let Some(req) = obj.get("required") {
        let names = req
            .as_array()
            .ok_or("requestedSchema.required must be an array")?;
        for n in names {
            let n = n
                .as_str()
                .ok_or("requestedSchema.required must list strings")?;
            if !props.contains_key(n) {
                return Err(format!("required property {n:?} is not defined"));
            }
        }
    }
    jsonschema::validator_for(schema)
        .map_err(|e| format!("requestedSchema is not a valid JSON Schema: {e}"))?;
    Ok(())
}

/// Returns `Err(reason)` when no value satisfies the property `prop`: an empty choice list
/// (`enum`, `oneOf`, `items.enum`, `items.anyOf`), `minimum` > `maximum` (for an integer: no
/// integer between them), `minLength` > `maxLength`, `minItems` > `maxItems` or more items
/// required than there are choices.
fn check_satisfiable(prop: &Value) -> Result<(), String> {
    let choices = |v: &Value, key: &str| -> Result<Option<usize>, String> {
        match v.get(key) {
            None => Ok(None),
            Some(Value::Array(a)) if a.is_empty() => Err(format!("{key} offers no choice")),
            Some(Value::Array(a)) => Ok(Some(a.len())),
            Some(_) => Err(format!("{key} must be an array")),
        }
    };
    choices(prop, "enum")?;
    choices(prop, "oneOf")?;
    let num = |key: &str| prop.get(key).and_then(Value::as_f64);
    if let (Some(lo), Some(hi)) = (num("minimum"), num("maximum")) {
        let empty = if prop.get("type").and_then(Value::as_str) == Some("integer") {
            lo.ceil() > hi.floor()
        } else {
            lo > hi
        };
        if empty {
            return Err(format!(
                "no value lies between minimum {lo} and maximum {hi}"
            ));
        }
    }
    if let (Some(lo), Some(hi)) = (num("minLength"), num("maxLength"))
        && lo > hi
    {
        return Err(format!("minLength {lo} is above maxLength {hi}"));
    }
    if let Some(items) = prop.get("items") {
        let offered = choices(items, "enum")?.or(choices(items, "anyOf")?);
        if let (Some(lo), Some(hi)) = (num("minItems"), num("maxItems"))
            && lo > hi
        {
            return Err(format!("minItems {lo} is above maxItems {hi}"));
        }
        if let (Some(lo), Some(n)) = (num("minItems"), offered)
            && lo > n as f64
        {
            return Err(format!("minItems {lo} asks for more than the {n} choices"));
        }
    }
    Ok(())
}

/// Returns `Err(reason)` unless `request` is a form elicitation as SEP-2663 carries it in
/// `inputRequests`: `{"method": "elicitation/create", "params": {"mode"?: "form", "message":
/// string, "requestedSchema"?: form schema}}` (the schema checked by
/// [`check_elicitation_schema`]; the message at most
/// [`INPUT_MESSAGE_MAX_BYTES`](taskdeck_engine::limits::INPUT_MESSAGE_MAX_BYTES)), with no
/// `params._meta["taskdeck/approval"]`
/// ([`poses_as_approval`](crate::approvals::question::poses_as_approval)).
pub fn check_input_request(request: &Value) -> Result<(), String> {
    if request.get("method").and_then(Value::as_str) != Some("elicitation/create") {
        return Err(
            "an input request must be {\"method\": \"elicitation/create\", \"params\": {...}}"
                .into(),
        );
    }
    let params = request
        .get("params")
        .and_then(Value::as_object)
        .ok_or("an input request needs params")?;
    // The inbox would show it as Taskdeck's own approval of a gateway call.
    if crate::approvals::question::poses_as_approval(request) {
        return Err(format!(
            "params._meta[\"{}\"] is Taskdeck's own approvals'; a runner's question may not carry it",
            crate::approvals::question::META_KEY
        ));
    }
    if params.get("mode").is_some_and(|m| m != "form") {
        return Err("only form elicitations (mode \"form\") are supported".into());
    }
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .filter(|m| !m.trim().is_empty())
        .ok_or("params.message must be a non-empty string")?;
    taskdeck_engine::limits::check_input_message("params.message", message)?;
    match params.get("requestedSchema") {
        Some(schema) => check_elicitation_schema(schema),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::check_elicitation_schema;

    #[test]
    fn accepts_forms_and_rejects_nesting() {
        let ok = json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1},
            "n": {"type": "integer", "minimum": 1},
            "ok": {"type": "boolean"},
            "color": {"type": "string", "enum": ["red", "blue"]},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}}
        }, "required": ["name"]});
        assert!(check_elicitation_schema(&ok).is_ok());
        let nested = json!({"type": "object", "properties": {"x": {"type": "object"}}});
        assert!(
            check_elicitation_schema(&nested)
                .unwrap_err()
                .contains("not allowed")
        );
        let missing = json!({"type": "object", "properties": {}, "required": ["x"]});
        assert!(check_elicitation_schema(&missing).is_err());
        assert!(check_elicitation_schema(&json!({"type": "string"})).is_err());
    }

    #[test]
    fn refuses_forms_nobody_can_fill_in() {
        let form = |prop: serde_json::Value| json!({"type": "object", "properties": {"a": prop}});
        for (prop, why) in [
            (
                json!({"type": "string", "enum": []}),
                "enum offers no choice",
            ),
            (
                json!({"type": "string", "oneOf": []}),
                "oneOf offers no choice",
            ),
            (
                json!({"type": "integer", "minimum": 5, "maximum": 1}),
                "no value lies between",
            ),
            (
                json!({"type": "integer", "minimum": 1.2, "maximum": 1.8}),
                "no value lies between",
            ),
            (
                json!({"type": "string", "minLength": 3, "maxLength": 2}),
                "minLength 3 is above maxLength 2",
            ),
            (
                json!({"type": "array", "items": {"enum": []}}),
                "enum offers no choice",
            ),
            (
                json!({"type": "array", "items": {"enum": ["x"]}, "minItems": 2}),
                "more than the 1 choices",
            ),
            (
                json!({"type": "array", "items": {"anyOf": [{"const": "x"}, {"const": "y"}]}, "minItems": 2, "maxItems": 1}),
                "minItems 2 is above maxItems 1",
            ),
        ] {
            let err = check_elicitation_schema(&form(prop.clone())).unwrap_err();
            assert!(err.contains(why), "{prop}: {err}");
            assert!(err.starts_with("property \"a\""), "{err}");
        }
        // Boundaries that still leave a value are fine.
        for prop in [
            json!({"type": "number", "minimum": 1.2, "maximum": 1.8}),
            json!({"type": "integer", "minimum": 3, "maximum": 3}),
            json!({"type": "string", "minLength": 2, "maxLength": 2}),
            json!({"type": "array", "items": {"enum": ["x", "y"]}, "minItems": 2, "maxItems": 2}),
        ] {
            assert!(
                check_elicitation_schema(&form(prop.clone())).is_ok(),
                "{prop}"
            );
        }
    }
}
