"""A mypy plugin that types Reflex pages the way Reflex builds them.

Reflex turns a state's vars into `Var`s when they are read on the state class
(`ChatState.density` is a `StringVar` in a page and a `str` in a handler), and the fields
of a dataclass var into `Var`s too (`group.live` on a `rx.foreach` item). Its annotations
say so to pyright, not to mypy: mypy takes `ChatState.density` for a `str`, resolves the
`rx.Field[...]` overloads for lists and dataclasses to `ArrayVar[Never]`, and types every
`@rx.event` handler as a bare `EventNamespace`. This plugin gives mypy Reflex's run-time
rules instead:

- `@rx.event`: in the body of `EventNamespace` (what `rx.event` is) the name
  `EventCallback` is also a class attribute, and mypy resolves the `__new__` annotation
  `EventCallback[*P]` to that attribute rather than the class. It is resolved to the
  class, as Python does, so a handler called in a page has its arguments checked.
- A state var read on its class (not a `_backend` var, not a `ClassVar`) is the `Var`
  for its type: `str` -> `StringVar`, `bool` -> `BooleanVar`, `int`/`float` ->
  `NumberVar`, a sequence -> `ArrayVar`, a mapping or a dataclass -> `ObjectVar`, else
  `Var`; `X | None` as `X`.
- A dataclass field read through an `ObjectVar` (`ObjectVar[CardVM]`) is the `Var` for
  the field's type; a name the dataclass does not have is an error, as it is at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from mypy.errorcodes import ATTR_DEFINED
from mypy.nodes import TypeInfo, Var
from mypy.plugin import AnalyzeTypeContext, AttributeContext, Plugin
from mypy.types import (
    AnyType,
    Instance,
    NoneType,
    TupleType,
    Type,
    TypeOfAny,
    UnboundType,
    UnionType,
    get_proper_type,
)

_EVENT_CALLBACK_ATTRIBUTE = "reflex_base.event.EventNamespace.EventCallback"
_EVENT_CALLBACK = "reflex_base.event.EventCallback"
_BASE_STATE = "reflex.state.BaseState"
_OBJECT_VAR_ATTRIBUTE = "reflex_base.vars.object.ObjectVar."
_VARS = "reflex_base.vars"
_VAR = f"{_VARS}.base.Var"
_FIELD = f"{_VARS}.base.Field"
_REFLEX_MODULES = ("reflex", "reflex_base")


class ReflexPlugin(Plugin):
    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        return self._event_callback if fullname == _EVENT_CALLBACK_ATTRIBUTE else None

    def get_class_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        owner, _, name = fullname.rpartition(".")
        info = self._type_info(owner)
        if name.startswith("_") or info is None or not info.has_base(_BASE_STATE):
            return None
        node = info.get(name)
        var = node.node if node is not None else None
        if not isinstance(var, Var) or var.is_classvar or var.is_inferred or var.type is None:
            return None
        if var.info.module_name.split(".")[0] in _REFLEX_MODULES:
            return None  # Reflex's own attributes keep Reflex's annotations
        return partial(self._read_on_class, var.type)

    def get_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        if fullname.startswith(_OBJECT_VAR_ATTRIBUTE):
            return partial(self._dataclass_field, fullname.removeprefix(_OBJECT_VAR_ATTRIBUTE))
        return None

    def _type_info(self, fullname: str) -> TypeInfo | None:
        node = self.lookup_fully_qualified(fullname)
        return node.node if node is not None and isinstance(node.node, TypeInfo) else None

    def _var(self, name: str, *args: Type) -> Type:
        info = self._type_info(f"{_VARS}.{name}")
        if info is None:
            return AnyType(TypeOfAny.special_form)  # Reflex moved it: no checking, no crash
        return Instance(info, list(args))

    def _var_for(self, value_type: Type) -> Type:
        """The `Var` Reflex makes for a value of `value_type` (`guess_type` at run time)."""
        proper = get_proper_type(value_type)
        if isinstance(proper, UnionType):
            present = [t for t in proper.items if not isinstance(get_proper_type(t), NoneType)]
            return self._var_for(present[0]) if len(present) == 1 else self._var("base.Var", proper)
        if isinstance(proper, NoneType):
            return self._var("base.NoneVar")
        if isinstance(proper, TupleType):
            return self._var("sequence.ArrayVar", proper)
        if not isinstance(proper, Instance):
            return self._var("base.Var", proper)
        info = proper.type
        if info.fullname == _FIELD and proper.args:
            return self._var_for(proper.args[0])  # `x: rx.Field[T]` is read like `x: T`
        if info.has_base(_VAR):
            return proper  # already a Var (a computed var)
        if info.fullname == "builtins.bool":
            return self._var("number.BooleanVar")
        if info.fullname in ("builtins.int", "builtins.float"):
            return self._var("number.NumberVar", proper)
        if info.fullname == "builtins.str":
            return self._var("sequence.StringVar", proper)
        if info.has_base("typing.Sequence") or info.has_base("builtins.set"):
            return self._var("sequence.ArrayVar", proper)
        if info.has_base("typing.Mapping") or "dataclass" in info.metadata:
            return self._var("object.ObjectVar", proper)
        return self._var("base.Var", proper)

    def _read_on_class(self, value_type: Type, ctx: AttributeContext) -> Type:
        return ctx.default_attr_type if ctx.is_lvalue else self._var_for(value_type)

    def _dataclass_field(self, name: str, ctx: AttributeContext) -> Type:
        item = get_proper_type(ctx.type.args[0]) if isinstance(ctx.type, Instance) else None
        if not isinstance(item, Instance) or "dataclass" not in item.type.metadata:
            return ctx.default_attr_type
        node = item.type.get(name)
        if node is None or not isinstance(node.node, Var) or node.node.type is None:
            ctx.api.fail(
                f'"{item.type.name}" has no field "{name}"', ctx.context, code=ATTR_DEFINED
            )
            return AnyType(TypeOfAny.from_error)
        return self._var_for(node.node.type)

    def _event_callback(self, ctx: AnalyzeTypeContext) -> Type:
        info = self._type_info(_EVENT_CALLBACK)
        # `EventCallback[*P]`: read as a tuple's arguments, where mypy accepts the unpack.
        args = get_proper_type(ctx.api.analyze_type(UnboundType("tuple", ctx.type.args)))
        if info is None or not isinstance(args, TupleType):
            return AnyType(TypeOfAny.special_form)
        return Instance(info, args.items)


def plugin(version: str) -> type[Plugin]:
    return ReflexPlugin
