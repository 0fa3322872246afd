//! Checks that a JSON Schema stays inside the elicitation subset (MCP 2025-11-25 and 2026-07-28
//! `ElicitRequest.requestedSchema`): a flat object whose properties are strings (with
//! `format`, `minLength`, `maxLength`), numbers/integers (with `minimum`, `maximum`), booleans,
//! or enums (single: `enum`/`oneOf`; multi: `type: "array"` with `items.enum`/`items.anyOf`).

use serde_json::Value;

/// Returns `Err(reason)` when `schema` is not an elicitation form schema.
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

/// Returns `Err(reason)` unless `request` is a form elicitation as SEP-2663 carries it in
/// `inputRequests`: `{"method": "elicitation/create", "params": {"mode"?: "form", "message":
/// string, "requestedSchema"?: form schema}}` (the schema checked by
/// [`check_elicitation_schema`]).
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
    if params.get("mode").is_some_and(|m| m != "form") {
        return Err("only form elicitations (mode \"form\") are supported".into());
    }
    if params
        .get("message")
        .and_then(Value::as_str)
        .is_none_or(|m| m.trim().is_empty())
    {
        return Err("params.message must be a non-empty string".into());
    }
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
}
