//go:build !browser

package web

// browserTests is set when the browser tests are built (-tags browser):
// they need the page's real client.
const browserTests = false
