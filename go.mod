module github.com/ghostwire/ghostwire

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/mlange-42/arche v0.15.3
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/crypto v0.59.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
