package shopsites

import "strings"

// The shops' configs are written as templates in which {base} stands for
// the shop's base URL.

// configHead returns the top-level keys of a config named name.
func configHead(name string, startURLs ...string) string {
	return "name = \"" + name + "\"\nstart_urls = [\"" + strings.Join(startURLs, "\", \"") +
		"\"]\nstorage = \"state\"\noutput = \"out\"\n"
}

// policyTable ends every config: fast waits for tests, so retries, retry
// passes and trips take milliseconds. Tests may append keys to it.
const policyTable = `
[policy]
concurrency = 4
timeout = "5s"
backoff = "1ms"
max_backoff = "5ms"
retry_pass_delay = "10ms"
pause = "0s"
`

// render returns a config: head, then body and policyTable with {base}
// replaced by base.
func render(base, head, body string) string {
	return strings.ReplaceAll(head+body+policyTable, "{base}", base)
}
