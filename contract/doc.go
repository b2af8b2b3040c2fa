// Package contract is durable-browser's wire contract: what an orchestrator,
// the CLI, the MCP server, another SDK's author and the worker all agree on.
//
// It holds the tool registry, the one place a tool is declared: its name,
// activity, replay class ([ReplayClass]), queue ([Queue]), argument and
// result types, schema and description ([Definitions], [Spec], [SpecOf]);
// [Validate], which holds a model's call to exactly the schema it was shown;
// the failure envelope ([Failure]) and its codes; the activity requests
// ([Call], [SnapshotRequest], ...); the names and payloads of the session
// workflow's update, signals and queries ([ToolCall], [SessionOptions],
// [SessionRef]); the renderings of the tool list for model APIs
// ([OpenAITools], [AnthropicTools]) and of an answer for a model
// ([ForModel]); and the system prompt section with the page-text fence
// ([Prompt], [Fence]).
//
// It imports the standard library and a schema validator only, so what an
// orchestrator imports stays light.
package contract
