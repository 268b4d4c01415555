// Package codec implements what package netsync declares: the Stream that
// runs a type's one description in each direction (encode, decode,
// quantize, describe, compare), the quantizers, the schema with its
// hashes, the game's input rules and the interpolation blends. The public
// types of netsync are defined on these (netsync.Schema is a
// codec.Schema), so the endpoints convert a game's value without copying
// and reach what a game never calls.
package codec
