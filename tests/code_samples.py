"""One real source file per language the code tools read, with the symbols each must yield.

``SAMPLES[language] = (file name, source, expected)``, where ``expected`` lists
``(qualified name, kind, first line, last line)`` for every symbol, in file order. The
sources are small but real: what each language's everyday code looks like (decorators,
doc comments, generics, nested members, exports), written for these tests.
``write_repo`` lays them all out in a git work tree with the folders the walk must skip.
"""

from __future__ import annotations

from pathlib import Path

PYTHON = '''\
"""Accounts."""

import os
from typing import Any


class Account(Base):
    """A bank account."""

    rate = 0.1

    @property
    def balance(self) -> int:
        return self._balance

    def deposit(self, amount: int = 0, meta: dict[str, Any] = {}) -> None:
        # adds money
        self._balance += amount


def _helper(x,
            y):
    return x + y
'''

TYPESCRIPT = """\
import { readFile } from "node:fs";

/** A user of the system. */
export interface User {
  id: string;
}

export type UserId = string;

export enum Role { Admin, Guest }

export class UserStore {
  private users: User[] = [];

  add(user: User): void {
    this.users.push(user);
  }
}

export const findUser = (id: UserId): User | undefined => {
  return undefined;
};

function internal(): number {
  return 1;
}
"""

TSX = """\
import React from "react";

export function Button(props: { label: string }) {
  return <button>{props.label}</button>;
}

const Card = ({ title }: { title: string }) => <div>{title}</div>;
"""

JAVASCRIPT = """\
const path = require("path");
import fs from "fs";

// Greets someone.
export function greet(name) {
  return `hi ${name}`;
}

class Counter {
  increment() {
    this.n += 1;
  }
}

const twice = function (x) {
  return x * 2;
};
"""

GO = """\
package store

import "fmt"

// Store keeps items.
type Store struct {
\titems []string
}

func (s *Store) Add(item string) {
\ts.items = append(s.items, item)
}

func newStore() *Store {
\tfmt.Println("new")
\treturn &Store{}
}
"""

RUST = """\
use std::collections::HashMap;

/// A cache of values.
pub struct Cache<T> {
    map: HashMap<String, T>,
}

impl<T> Cache<T> {
    pub fn get(&self, key: &str) -> Option<&T> {
        self.map.get(key)
    }
}

pub trait Store {
    fn put(&mut self, key: String);
}

enum Mode { Fast, Slow }

fn helper() -> u32 {
    1
}
"""

JAVA = """\
package bank;

import java.util.List;

/** A ledger. */
public class Ledger {
    private final List<String> rows;

    public Ledger(List<String> rows) {
        this.rows = rows;
    }

    public int size() {
        return rows.size();
    }
}

interface Audited {
    void audit();
}
"""

C = """\
#include <stdio.h>
#include "ledger.h"

struct point {
    int x;
    int y;
};

typedef unsigned long size_type;

int *allocate(int n);

/* Adds two numbers. */
static int add(int a, int b) {
    return a + b;
}

enum color { RED, GREEN };
"""

CPP = """\
#include <vector>

namespace geo {

class Shape {
 public:
  virtual double area() const { return 0; }
};

}  // namespace geo

double geo::Circle::area() const {
  return 3.14;
}

template <typename T>
T identity(T x) {
  return x;
}
"""

RUBY = """\
require "json"
require_relative "helper"

module Billing
  # An invoice.
  class Invoice
    def total
      42
    end

    def self.build
      new
    end
  end
end

def top_level
  puts "hi"
end
"""

BASH = """\
#!/usr/bin/env bash
set -euo pipefail

# Prints a greeting.
greet() {
  echo "hello $1"
}

function cleanup {
  rm -rf /tmp/x
}

greet world
"""

MARKDOWN = """\
---
title: Guide
---
# Guide

Intro text.

## Install

```bash
pip install workbench
```

## Use

Run it.

Setext title
============

More.
"""

# language -> (file name, source, [(qualified name, kind, first line, last line), ...])
SAMPLES: dict[str, tuple[str, str, list[tuple[str, str, int, int]]]] = {
    "python": (
        "src/accounts.py",
        PYTHON,
        [
            ("Account", "class", 7, 18),
            ("Account.balance", "method", 13, 14),
            ("Account.deposit", "method", 16, 18),
            ("_helper", "function", 21, 23),
        ],
    ),
    "typescript": (
        "web/users.ts",
        TYPESCRIPT,
        [
            ("User", "interface", 4, 6),
            ("UserId", "type", 8, 8),
            ("Role", "enum", 10, 10),
            ("UserStore", "class", 12, 18),
            ("UserStore.add", "method", 15, 17),
            ("findUser", "function", 20, 22),
            ("internal", "function", 24, 26),
        ],
    ),
    "tsx": (
        "web/button.tsx",
        TSX,
        [("Button", "function", 3, 5), ("Card", "function", 7, 7)],
    ),
    "javascript": (
        "web/greet.js",
        JAVASCRIPT,
        [
            ("greet", "function", 5, 7),
            ("Counter", "class", 9, 13),
            ("Counter.increment", "method", 10, 12),
            ("twice", "function", 15, 17),
        ],
    ),
    "go": (
        "store/store.go",
        GO,
        [
            ("Store", "type", 6, 8),
            ("Add", "method", 10, 12),
            ("newStore", "function", 14, 17),
        ],
    ),
    "rust": (
        "src/cache.rs",
        RUST,
        [
            ("Cache", "struct", 4, 6),
            ("Cache", "impl", 8, 12),
            ("Cache.get", "method", 9, 11),
            ("Store", "trait", 14, 16),
            ("Mode", "enum", 18, 18),
            ("helper", "function", 20, 22),
        ],
    ),
    "java": (
        "src/Ledger.java",
        JAVA,
        [
            ("Ledger", "class", 6, 16),
            ("Ledger.Ledger", "method", 9, 11),
            ("Ledger.size", "method", 13, 15),
            ("Audited", "interface", 18, 20),
            ("Audited.audit", "method", 19, 19),
        ],
    ),
    "c": (
        "native/ledger.c",
        C,
        [
            ("point", "struct", 4, 7),
            ("size_type", "type", 9, 9),
            ("allocate", "function", 11, 11),
            ("add", "function", 14, 16),
            ("color", "enum", 18, 18),
        ],
    ),
    "cpp": (
        "native/shape.cpp",
        CPP,
        [
            ("Shape", "class", 5, 8),
            ("Shape.area", "method", 7, 7),
            ("geo::Circle::area", "function", 12, 14),
            ("identity", "function", 17, 19),
        ],
    ),
    "ruby": (
        "lib/billing.rb",
        RUBY,
        [
            ("Billing", "class", 4, 15),
            ("Billing.Invoice", "class", 6, 14),
            ("Billing.Invoice.total", "method", 7, 9),
            ("Billing.Invoice.build", "method", 11, 13),
            ("top_level", "function", 17, 19),
        ],
    ),
    "bash": (
        "scripts/setup.sh",
        BASH,
        [("greet", "function", 5, 7), ("cleanup", "function", 9, 11)],
    ),
    "markdown": (
        "docs/guide.md",
        MARKDOWN,
        [
            ("anonymous", "metadata", 1, 3),
            ("Guide", "section", 4, 17),
            ("Install", "section", 8, 13),
            ("bash", "code", 10, 12),
            ("Use", "section", 14, 17),
            ("Setext title", "section", 18, 22),
        ],
    ),
}


def write_repo(root: Path) -> Path:
    """Every sample under ``root`` (a git work tree), plus what the walk must not read."""
    (root / ".git").mkdir(parents=True)
    for name, source, _ in SAMPLES.values():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    hidden = "def qqxneedle():\n    pass\n"
    for skipped in ("node_modules/pkg/index.py", "vendor/lib.py", ".hidden/x.py", "out/gen.py"):
        path = root / skipped
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(hidden, encoding="utf-8")
    (root / ".gitignore").write_text("out/\n*.generated.py\n", encoding="utf-8")
    (root / "src" / "models.generated.py").write_text(hidden, encoding="utf-8")
    return root
