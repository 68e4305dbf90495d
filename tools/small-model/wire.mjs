// Translates between the OpenAI Chat Completions wire and what the model is given and gives back: a request's
// messages as a chat history, its tools as the JSON schema the output is held to, and the model's forced
// `{"name": ..., "arguments": ...}` text as a tool call's name and argument fragments.

/** Longest string and array the grammar lets the model write: a 135M model left unbounded can ramble until
 * max_tokens and never close the JSON. */
export const STRING_CAP = 48;
export const ARRAY_CAP = 4;
const MAX_DEPTH = 6;

/** Any scalar, bounded. node-llama-cpp's own "any JSON" allows unbounded strings and nesting. */
const ANY = {oneOf: [{type: "string", maxLength: STRING_CAP}, {type: ["number", "boolean", "null"]}]};

/** A message's text: a string, or the text parts of a content array. */
export function messageText(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
        return content.map((part) => (part && typeof part.text === "string" ? part.text : "")).join("");
    }
    return "";
}

/** The tools of a request as [{name, description, parameters}], or [] (a malformed entry is a 400). */
export function requestTools(body) {
    const tools = body.tools ?? [];
    if (!Array.isArray(tools)) throw new WireError("tools must be an array");
    return tools.map((tool, i) => {
        const fn = tool?.function;
        if (tool?.type !== "function" || typeof fn?.name !== "string" || !fn.name) {
            throw new WireError(`tools[${i}] must be {"type": "function", "function": {"name": ...}}`);
        }
        return {name: fn.name, description: String(fn.description ?? ""), parameters: fn.parameters ?? {}};
    });
}

/** The tools the model must choose among, or null when it answers in text: a tool result last, no tools,
 * or tool_choice "none". A tool_choice naming a function narrows the choice to it. */
export function forcedTools(body, tools) {
    const messages = body.messages;
    const last = messages[messages.length - 1];
    const choice = body.tool_choice;
    if (tools.length === 0 || choice === "none" || last?.role === "tool") return null;
    const named = choice?.function?.name;
    if (typeof named === "string") {
        const only = tools.filter((tool) => tool.name === named);
        if (only.length === 0) throw new WireError(`tool_choice names ${named}, which is not among the tools`);
        return only;
    }
    return tools;
}

export class WireError extends Error {}

/** The OpenAI messages as node-llama-cpp's chat history; the tools (if any) described in the system text. */
export function chatHistory(body, tools) {
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
        throw new WireError("messages must be a non-empty array");
    }
    const system = [];
    const history = [];
    for (const message of body.messages) {
        const role = message?.role;
        const text = messageText(message?.content);
        if (role === "system" || role === "developer") {
            system.push(text);
        } else if (role === "user") {
            history.push({type: "user", text});
        } else if (role === "assistant") {
            const calls = (message.tool_calls ?? []).map((call) =>
                JSON.stringify({name: call?.function?.name, arguments: parseArguments(call?.function?.arguments)}));
            history.push({type: "model", response: [[text, ...calls].filter(Boolean).join("\n")]});
        } else if (role === "tool") {
            history.push({type: "user", text: `Tool result (${message.tool_call_id ?? "call"}):\n${text}`});
        } else {
            throw new WireError(`unknown message role: ${role}`);
        }
    }
    if (tools.length > 0) {
        const listed = tools.map((tool) => `- ${tool.name}: ${tool.description}\n  arguments: ${JSON.stringify(tool.parameters)}`);
        system.push(`You can call these tools by answering {"name": TOOL, "arguments": {...}}:\n${listed.join("\n")}`);
    }
    return system.length > 0 ? [{type: "system", text: system.join("\n\n")}, ...history] : history;
}

function parseArguments(text) {
    try {
        return JSON.parse(text ?? "{}");
    } catch {
        return text;
    }
}

/** The JSON schema the model's output is held to: one of the tools, by name, with its arguments. */
export function toolCallSchema(tools) {
    const options = tools.map((tool) => ({
        type: "object",
        properties: {name: {const: tool.name}, arguments: argumentsSchema(tool.parameters)},
        required: ["name", "arguments"],
    }));
    return options.length === 1 ? options[0] : {oneOf: options};
}

/** A tool's input schema as far as node-llama-cpp's grammar can express it, always an object. */
export function argumentsSchema(parameters) {
    const schema = grammarSchema(parameters, parameters, 0);
    return schema.type === "object" ? schema : {type: "object", properties: {}};
}

function grammarSchema(schema, root, depth) {
    if (!schema || typeof schema !== "object" || depth > MAX_DEPTH) return ANY;
    if (typeof schema.$ref === "string") return grammarSchema(resolveRef(schema.$ref, root), root, depth + 1);
    if ("const" in schema && isScalar(schema.const)) return {const: schema.const};
    if (Array.isArray(schema.enum)) {
        const values = schema.enum.filter(isScalar);
        return values.length > 0 ? {enum: values} : ANY;
    }
    const alternatives = schema.oneOf ?? schema.anyOf;
    if (Array.isArray(alternatives) && alternatives.length > 0) {
        return {oneOf: alternatives.map((alt) => grammarSchema(alt, root, depth + 1))};
    }
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.length > 1) return {oneOf: types.map((type) => grammarSchema({...schema, type}, root, depth + 1))};
    switch (types[0]) {
        case "object": return objectSchema(schema, root, depth);
        case "array": {
            const maxItems = Math.min(schema.maxItems ?? ARRAY_CAP, ARRAY_CAP);
            return {type: "array", items: grammarSchema(schema.items, root, depth + 1), maxItems,
                minItems: Math.min(schema.minItems ?? 0, maxItems)};
        }
        case "string": {
            if (["date-time", "time", "date"].includes(schema.format)) return {type: "string", format: schema.format};
            const maxLength = Math.min(schema.maxLength ?? STRING_CAP, STRING_CAP);
            return {type: "string", maxLength, minLength: Math.min(schema.minLength ?? 0, maxLength)};
        }
        case "number": case "integer": case "boolean": case "null": return {type: types[0]};
        default: return schema.properties ? objectSchema(schema, root, depth) : ANY;
    }
}

/** Every property the grammar writes is written, so only the required ones are offered (all of them when
 * none is required); no further keys. */
function objectSchema(schema, root, depth) {
    const properties = schema.properties && typeof schema.properties === "object" ? schema.properties : {};
    const required = (Array.isArray(schema.required) ? schema.required : []).filter((key) => key in properties);
    const keys = required.length > 0 ? required : Object.keys(properties);
    return {
        type: "object",
        properties: Object.fromEntries(keys.map((key) => [key, grammarSchema(properties[key], root, depth + 1)])),
        additionalProperties: false,
    };
}

function resolveRef(ref, root) {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
    return match ? root?.[match[1]]?.[match[2]] : undefined;
}

function isScalar(value) {
    return value === null || ["string", "number", "boolean"].includes(typeof value);
}

const HEAD = /^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*(?=\S)/;
const TAIL = /[\s}]*$/;

/** Splits the model's streamed `{"name": N, "arguments": A}` into N (once known) and A's text as it comes: what
 * follows the head is A, less the outer object's closing brace, held back until the output ends. */
export class ToolCallSplitter {
    constructor() {
        this.text = "";
        this.name = null;
        this.sent = 0;  // how much of the text after the head has been given out as arguments
        this.start = 0;
    }

    /** Feed generated text; returns {name} once when the name is complete, then {fragment} pieces. */
    push(chunk) {
        this.text += chunk;
        const out = [];
        if (this.name === null) {
            const head = HEAD.exec(this.text);
            if (!head) return out;
            this.name = JSON.parse(head[1]);
            this.start = this.sent = head[0].length;
            out.push({name: this.name});
        }
        // Hold back trailing whitespace and braces: the last "}" is the outer object's, not the arguments'.
        const safe = this.text.length - TAIL.exec(this.text.slice(this.sent))[0].length;
        if (safe > this.sent) {
            out.push({fragment: this.text.slice(this.sent, safe)});
            this.sent = safe;
        }
        return out;
    }

    /** The output ended: the held-back rest of the arguments, without the outer closing brace (when the
     * output is `complete`; cut off at max_tokens, it has none). */
    finish(complete) {
        if (this.name === null) return [];
        const held = this.text.slice(this.sent);
        const rest = complete ? held.replace(/\s*\}\s*$/, "") : held;
        this.sent = this.text.length;
        return rest ? [{fragment: rest}] : [];
    }
}
