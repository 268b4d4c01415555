package netsync

import (
	"reflect"
	"strconv"
)

// FieldDiff names the first field of a component whose wire codes differ
// between the client's prediction and the server's state (see
// systems.ClientOptions.OnMisprediction), with both values of the field.
// It holds no strings but the two names, so finding a difference
// allocates nothing; printing it (Values, String) does.
type FieldDiff struct {
	// Component is the component's type, as "game.Position".
	Component string
	// Field is the field's path in the type, as "X" or "Pos.Y".
	Field string
	// Kind is the field's Go kind: Float32 (a Range, an Angle or an exact
	// float), Bool, Uint8 (a press), Uint32 (a tick), or the integer kind
	// of an Int field.
	Kind reflect.Kind
	// Predicted and Server are the field's value in the prediction and in
	// the server's state (a bool as 0 or 1); every kind a Stream codes
	// converts to float64 exactly.
	Predicted, Server float64
}

// Values prints the field's predicted value and the server's as Go would
// print the field ("1.5", "true", "42"); both are "" when Kind is
// reflect.Invalid.
func (d FieldDiff) Values() (predicted, server string) {
	return formatNumber(d.Kind, d.Predicted), formatNumber(d.Kind, d.Server)
}

// String describes the difference: "game.Position.X: 1.5 then 2".
func (d FieldDiff) String() string {
	a, b := d.Values()
	return d.Component + "." + d.Field + ": " + a + " then " + b
}

// formatNumber prints v as a value of kind k.
func formatNumber(k reflect.Kind, v float64) string {
	switch k {
	case reflect.Invalid:
		return ""
	case reflect.Float32:
		return strconv.FormatFloat(v, 'g', -1, 32)
	case reflect.Bool:
		return strconv.FormatBool(v != 0)
	}
	return strconv.FormatInt(int64(v), 10)
}
