#!/usr/bin/env bash
# Scaffold a workspace package: scripts/new-package.sh packages/NAME "@veetbot/NAME" "one-line purpose"
set -euo pipefail
dir=$1; name=$2; purpose=$3
mkdir -p "$dir/src" "$dir/test"
[ -f "$dir/package.json" ] || cat > "$dir/package.json" <<JSON
{
  "name": "$name",
  "version": "0.1.0",
  "private": true,
  "type": "module",
  "description": "$purpose",
  "exports": { ".": "./src/index.ts", "./package.json": "./package.json" },
  "scripts": {
    "typecheck": "tsc -p tsconfig.json",
    "test": "vitest run"
  },
  "dependencies": {},
  "devDependencies": {
    "@types/node": "catalog:",
    "@veetbot/tsconfig": "workspace:*",
    "typescript": "catalog:",
    "vitest": "catalog:"
  }
}
JSON
[ -f "$dir/tsconfig.json" ] || cat > "$dir/tsconfig.json" <<JSON
{
  "extends": "@veetbot/tsconfig/base.json",
  "include": ["src", "test"]
}
JSON
