package components

// Predicted marks an entity that the prediction group simulates in this
// world. On a client these are the entities it predicts (the ghosts it
// owns, and those of types every client predicts); their registered components are recorded every tick and restored
// on rollback. On a server every simulated entity carries it, so the same
// prediction systems run there unchanged.
//
// Prediction systems select their entities with this marker, for example
// generic.NewFilter2[Position, Velocity]().With(generic.T[components.Predicted]()).
type Predicted struct{}
