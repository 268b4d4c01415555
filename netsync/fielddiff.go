package netsync

import "github.com/ghostwire/ghostwire/internal/codec"

// FieldDiff names the first field of a component whose wire codes differ
// between two values (a client's prediction and the server's state), and
// keeps both values of the field: printing them (String) is left until
// someone asks, so finding a difference allocates nothing. Its
// exported fields are Component, the component's type ("game.Position"),
// and Field, the field's path in the type ("X", "Pos.Y").
type FieldDiff codec.FieldDiff

// String describes the difference: "game.Position.X: 1.5 then 2".
func (d FieldDiff) String() string { return codec.FieldDiff(d).String() }
