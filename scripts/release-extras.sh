#!/usr/bin/env bash
# release-extras.sh DIR: write what the release archives carry beside the
# binaries: man pages (DIR/man) and bash, zsh and fish completions of abctl
# and conformance (DIR/completions). Called by .goreleaser.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: release-extras.sh DIR}
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"
go run ./internal/cli/gendocs -man "$out/man"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/" ./cmd/abctl ./cmd/conformance
for prog in abctl conformance; do
  "$tmp/$prog" completion bash > "$out/completions/$prog.bash"
  "$tmp/$prog" completion zsh > "$out/completions/_$prog"
  "$tmp/$prog" completion fish > "$out/completions/$prog.fish"
done
