module github.com/abkit/abkit

go 1.26
