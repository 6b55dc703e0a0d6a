// Package tool is the contract a Steward tool fulfils and what every tool
// uses: its definition, the Tool interface with defaults in Base, the
// execution context and result, the policy-block error, and the helpers for
// schemas, arguments, paging and result content.
//
// It knows no provider and no wire format: a tool never learns which API
// shape carried its call. It imports only policy.
package tool
