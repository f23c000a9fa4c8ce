// Package dagsterpipes speaks the external side of Dagster Pipes, the
// protocol by which a process Dagster launched (PipesSubprocessClient, a
// Kubernetes pod, ...) reads its execution context and reports logs, asset
// materializations and asset checks back, without a Dagster library.
//
// Dagster passes two bootstrap parameters in the environment,
// DAGSTER_PIPES_CONTEXT and DAGSTER_PIPES_MESSAGES, each
// base64(zlib(JSON)). The context parameters say where the context is
// ({"path": FILE} or {"data": {...}}); the messages parameters where to
// write messages ({"path": FILE}, appended to, or {"stdio": "stdout" |
// "stderr"}). Every message is one JSON line with the envelope
// {"__dagster_pipes_version": "0.1", "method": ..., "params": ...}: first
// "opened", last "closed". The shapes follow the protocol's reference
// implementation (python_modules/dagster-pipes in the Dagster repository,
// protocol version 0.1).
package dagsterpipes
