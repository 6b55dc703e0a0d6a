// Package webtest is the made-up public web that tests of web.Service's
// users (tools/webpage, tools/websearch) read from: a resolver that maps
// made-up public names to made-up addresses, and a dial hook that routes
// those addresses to one loopback test server, so the code under test sees
// public hosts while no traffic ever leaves loopback. A dial of any other
// address fails the test. It also holds the small test fixtures those
// packages share: a recorder of the injection filter's reports, a quiet
// logger and filler page text.
//
// It is imported only by tests. It never contacts anything but the
// loopback server it starts.
package webtest
