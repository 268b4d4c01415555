package components

// Hitbox shapes.
const (
	// ShapeSphere is a sphere of Radius around Offset.
	ShapeSphere uint8 = iota + 1
	// ShapeCapsule is the set of points within Radius of the segment from
	// Offset−Half to Offset+Half.
	ShapeCapsule
	// ShapeBox is a box centred on Offset with half extents Half.
	ShapeBox
)

// maxHitboxes is the most hitboxes one entity carries.
const maxHitboxes = 16

// Hitbox is one shape of an entity's hit volume, in the entity's local
// frame: lag compensation rotates Offset and Half by the entity's yaw (about
// the Z axis) and adds its position.
type Hitbox struct {
	Shape  uint8
	Part   uint8 // the game's name for the part hit (head, body, ...)
	Offset [3]float32
	Half   [3]float32
	Radius float32
}

// Hitboxes is an entity's hit volume; entities carrying it are what lag
// compensation records and rewinds.
type Hitboxes struct {
	N     uint8 // the boxes used, from the first; at most len(Boxes) (16) count
	Boxes [maxHitboxes]Hitbox
}
