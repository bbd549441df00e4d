"""The tree-sitter queries that find symbols, one per language (claude-mem's, extended).

Capture names carry the kind (``KINDS``); ``@name`` is the symbol's name, ``@imp`` an import
and ``@exp`` an export statement (JS/TS: what lies inside one is exported). Taken from the
original's ``QUERIES`` and widened where it missed common shapes: TypeScript abstract
classes, Rust ``impl<T> Foo<T>``, Java constructors, Ruby ``def self.x`` and only the
``require`` calls as imports (the original captured every call), and real C and C++
queries (the original gave them a generic query that matches no C function).
"""

from __future__ import annotations

_JS_COMMON = """
(function_declaration name: (identifier) @name) @func
(generator_function_declaration name: (identifier) @name) @func
(lexical_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression)])) @const_func
(method_definition name: (property_identifier) @name) @method
(import_statement) @imp
(export_statement) @exp
"""

_C_COMMON = """
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @func
(function_definition declarator: (pointer_declarator
  declarator: (function_declarator declarator: (identifier) @name))) @func
(declaration declarator: (function_declarator declarator: (identifier) @name)) @func
(declaration declarator: (pointer_declarator
  declarator: (function_declarator declarator: (identifier) @name))) @func
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @struct_def
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @enm
(type_definition declarator: (type_identifier) @name) @tdef
(preproc_include) @imp
"""

QUERIES: dict[str, str] = {
    "python": """
(function_definition name: (identifier) @name) @func
(class_definition name: (identifier) @name) @cls
(import_statement) @imp
(import_from_statement) @imp
""",
    "javascript": _JS_COMMON
    + """
(class_declaration name: (identifier) @name) @cls
""",
    "typescript": _JS_COMMON
    + """
(class_declaration name: (type_identifier) @name) @cls
(abstract_class_declaration name: (type_identifier) @name) @cls
(interface_declaration name: (type_identifier) @name) @iface
(type_alias_declaration name: (type_identifier) @name) @tdef
(enum_declaration name: (identifier) @name) @enm
""",
    "tsx": "",  # filled below: the TSX grammar takes TypeScript's query
    "go": """
(function_declaration name: (identifier) @name) @func
(method_declaration name: (field_identifier) @name) @method
(type_declaration (type_spec name: (type_identifier) @name)) @tdef
(import_declaration) @imp
""",
    "rust": """
(function_item name: (identifier) @name) @func
(struct_item name: (type_identifier) @name) @struct_def
(enum_item name: (type_identifier) @name) @enm
(trait_item name: (type_identifier) @name) @trait_def
(impl_item type: (type_identifier) @name) @impl_def
(impl_item type: (generic_type type: (type_identifier) @name)) @impl_def
(use_declaration) @imp
""",
    "java": """
(method_declaration name: (identifier) @name) @method
(constructor_declaration name: (identifier) @name) @method
(class_declaration name: (identifier) @name) @cls
(interface_declaration name: (identifier) @name) @iface
(enum_declaration name: (identifier) @name) @enm
(record_declaration name: (identifier) @name) @cls
(import_declaration) @imp
""",
    "c": _C_COMMON,
    "cpp": _C_COMMON
    + """
(function_definition declarator: (function_declarator
  declarator: (field_identifier) @name)) @method
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier) @name)) @func
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @cls
""",
    "ruby": """
(method name: (identifier) @name) @func
(singleton_method name: (identifier) @name) @func
(class name: (constant) @name) @cls
(module name: (constant) @name) @cls
((call method: (identifier) @_req) @imp
  (#match? @_req "^(require|require_relative|load)$"))
""",
    "bash": """
(function_definition name: (word) @name) @func
""",
    "markdown": """
(atx_heading heading_content: (inline) @name) @heading
(setext_heading heading_content: (paragraph) @name) @heading
(fenced_code_block (info_string (language) @name)) @code_block
(fenced_code_block) @code_block
(minus_metadata) @frontmatter
(link_reference_definition (link_label) @name) @ref
""",
}

QUERIES["tsx"] = QUERIES["typescript"]

# capture -> symbol kind (the original's KIND_MAP)
KINDS: dict[str, str] = {
    "func": "function",
    "const_func": "function",
    "cls": "class",
    "method": "method",
    "iface": "interface",
    "tdef": "type",
    "enm": "enum",
    "struct_def": "struct",
    "trait_def": "trait",
    "impl_def": "impl",
    "heading": "section",
    "code_block": "code",
    "frontmatter": "metadata",
    "ref": "reference",
}

# Kinds whose members are its children (a function inside one is a method).
CONTAINERS = frozenset({"class", "struct", "impl", "trait", "interface"})

ICONS: dict[str, str] = {
    "function": "ƒ",
    "method": "ƒ",
    "class": "◆",
    "interface": "◇",
    "type": "◇",
    "struct": "◆",
    "enum": "▣",
    "trait": "◇",
    "impl": "◈",
    "section": "§",
    "code": "⌘",
    "metadata": "◊",
    "reference": "↗",
}
