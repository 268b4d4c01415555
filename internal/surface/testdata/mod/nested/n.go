// Package nested is its own module: never listed.
package nested

func Nested() {}
