module github.com/abkit/abkit/bench

go 1.26.7

require (
	github.com/abkit/abkit v0.0.0
	github.com/gin-contrib/sse v1.1.2
	github.com/r3labs/sse/v2 v2.10.0
	github.com/tmaxmax/go-sse v0.12.0
)

require (
	golang.org/x/net v0.60.0 // indirect
	gopkg.in/cenkalti/backoff.v1 v1.1.0 // indirect
)

replace github.com/abkit/abkit => ../
