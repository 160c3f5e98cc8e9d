"""The locale catalogue: every fallback, framing and chrome string the UI shows.

Model-authored intents are never translated: the model already writes in the user's
language. Only what *we* write goes through here: the default card labels (`Ran {tool}`),
the error / cancel / background framings, the group counts, and the chrome of the chat
page and of the agent builder (`builder.*`).

Lookup falls back step by step and never raises: the requested language (`es-MX`, then
its primary subtag `es`), then English, then the key itself (so a missing string is
visible, not a crash). A key may carry a singular form under `"{key}#one"`, chosen when
the `n` parameter is 1. A template whose parameters are missing keeps the placeholder
literally (`Ran {tool}`) rather than failing, and parameter *values* are never parsed as
templates, so a label containing `{{tool0turn0}}` stays literal (docs/labels.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "CATALOG",
    "DEFAULT_LANGUAGE",
    "SUPPORTED_LANGUAGES",
    "Catalog",
    "negotiate_language",
    "translate",
]

DEFAULT_LANGUAGE = "en"

_PLURAL_ONE = "#one"

_EN: dict[str, str] = {
    "card.running": "Running {tool}",
    "card.ran": "Ran {tool}",
    "card.in_server": "{label} in {server}",
    "card.sibling": ' · "{value}"',
    "card.failed": "Failed: {label}",
    "card.cancelled": "Cancelled: {label}",
    "card.background": "{label} · in background",
    "group.used": "Used {n} tools",
    "group.used#one": "Used 1 tool",
    "group.server_suffix": " — {server}",
    "group.agents_running": "Running {n} agents",
    "group.agents_running#one": "Running 1 agent",
    "group.agents_ran": "Ran {n} agents",
    "group.agents_ran#one": "Ran 1 agent",
    "group.questions_asking": "Asking {n} questions",
    "group.questions_asking#one": "Asking 1 question",
    "group.questions_asked": "Asked {n} questions",
    "group.questions_asked#one": "Asked 1 question",
    "group.aria": "{label}, {n} tools",
    "group.aria#one": "{label}, 1 tool",
    "live.running": "Running {tool}",
    "ui.send": "Send",
    "ui.stop": "Stop",
    "ui.new_chat": "New chat",
    "ui.placeholder": "Message the agent…",
    "ui.arguments": "Arguments",
    "ui.result": "Result",
    "ui.rename": "Rename",
    "ui.delete": "Delete",
    "ui.language": "Language",
    "ui.agents": "Agents",
    "ui.goal": "Goal",
    "ui.intents": "Intents dashboard",
    "ui.density": "Display density",
    "ui.density_full": "Full",
    "ui.density_intents": "Intents",
    "ui.density_header": "Header only",
    "ui.theme": "Colour theme",
    "ui.theme_light": "Light",
    "ui.theme_dark": "Dark",
    "ui.theme_system": "System",
    "ui.menu": "Conversations",
    "ui.menu_close": "Close conversations",
    "ui.timeline": "Tool calls of this turn",
    "ui.copy_reply": "Copy reply",
    "ui.copy_code": "Copy code",
    "ui.copied": "Copied",
    "ui.copy_failed": (
        "Could not copy: the browser refused the clipboard. Select the text and copy it instead."
    ),
    "ui.search": "Search conversations",
    "ui.search_none": "No conversation matches.",
    "ui.shortcuts": "Keyboard shortcuts",
    "ui.shortcut_focus_input": "Go to the message box",
    "ui.shortcut_stop": "Stop the running turn",
    "ui.shortcut_help": "Show these shortcuts",
    "ui.shortcuts_note": "? opens this list when you are not typing in a field.",
    "ui.close": "Close",
    # A read-only link to a conversation (store/shares.py).
    "ui.share": "Share read-only link",
    "ui.share_url": "Read-only link to this conversation",
    "ui.share_revoke": "Revoke link",
    "ui.rewind": "Rewind to before",
    "ui.rewind_preview": "What a rewind puts back",
    "ui.rewind_files": "Restore files",
    "ui.rewind_all": "Restore files and conversation",
    "ui.rewind_none": "No file needs changing: the workspace already is as it was.",
    "ui.trace": "Trace",
    "ui.compacted": "Conversation compacted",
    "ui.compacted_note": (
        "To fit the context budget, the tool calls above were dropped from what the model "
        "reads. It reads these lines instead, one per call:"
    ),
    "ui.shared_notice": "Read-only view of a shared conversation",
    "ui.share_revoked": (
        "This link no longer shares a conversation: its owner revoked it, or it never existed."
    ),
    # A turn that failed: what happened, then what to do (core/failures.py).
    "ui.retry": "Retry",
    "ui.error_detail": "Details",
    # A reply's and a message's versions (store/conversations.py: a conversation's tree).
    "ui.regenerate": "Regenerate reply",
    "ui.continue": "Continue",
    "ui.edit_message": "Edit message",
    "ui.edit_save": "Save and send",
    "ui.edit_cancel": "Cancel",
    "ui.edit_label": "Edited message",
    "ui.versions": "Versions",
    "ui.version_previous": "Previous version",
    "ui.version_next": "Next version",
    "error.unreachable": "The model provider could not be reached.",
    "error.unreachable_hint": "Check that its server is running and that the endpoint's "
    "base_url points at it, then retry.",
    "error.auth": "The model provider refused the API key.",
    "error.auth_hint": "Set a valid api_key for this endpoint, one that may use this model (in "
    "intent_ui.yaml or the environment variable it names), restart the app, then retry.",
    "error.not_found": "The model provider knows neither this address nor this model.",
    "error.not_found_hint": "Check the endpoint's base_url and the model name, then retry.",
    "error.rate_limit": "The model provider is limiting requests, or the quota is used up.",
    "error.rate_limit_hint": "Wait a moment and retry; if it keeps happening, check the plan "
    "and quota of the API key.",
    "error.provider": "The model provider could not answer.",
    "error.provider_hint": "Retry in a moment; if it keeps failing, the details quote what "
    "the provider said.",
    "error.cut_off": "The reply was cut off: the model reached its output limit.",
    "error.cut_off_hint": "Retry, ask for a shorter answer, or raise max_tokens for this model.",
    "error.max_rounds": "The turn stopped after too many rounds of tool calls.",
    "error.max_rounds_hint": "Retry, or ask for a smaller task, one step at a time.",
    "error.internal": "The app failed while running this turn.",
    "error.internal_hint": "Retry; if it fails again, the server log says what went wrong.",
    "error.failed": "The turn ended with an error.",
    "error.failed_hint": "Retry; the details say what went wrong.",
    "error.tool": "{n} tools failed; the first was {tool}.",
    "error.tool#one": "A tool failed: {tool}.",
    "error.tool_hint": "The model was told and answered without its result. Check the tool "
    "(its MCP server, action or arguments), then retry.",
    "error.empty": "The model ended its turn without an answer.",
    "error.empty_hint": "Retry, or ask again in other words.",
    # The agent builder (`/agents`).
    "builder.back_to_chat": "← Chat",
    "builder.new_agent": "New agent",
    "builder.saved_agents": "Saved agents",
    "builder.agent_tools": "{n} tools",
    "builder.agent_tools#one": "1 tool",
    "builder.edit_agent": "Edit {name}",
    "builder.duplicate_agent": "Duplicate {name}",
    "builder.delete_agent": "Delete {name}",
    "builder.name": "Name",
    "builder.name_placeholder": "e.g. Code reviewer",
    "builder.instructions": "Instructions",
    "builder.instructions_placeholder": "What should this agent do, and how?",
    "builder.endpoint": "Endpoint",
    "builder.model": "Model",
    "builder.save": "Save",
    "builder.unsaved": "New agent, not saved yet",
    "builder.tools": "Tools",
    "builder.tools_help": (
        "Tick the tools this agent may use. The switches beside each tool decide how it "
        "behaves; switches for features your administrator has turned off are hidden."
    ),
    "builder.tokens_lead": "Tool descriptions sent with every request: ",
    "builder.tokens_with": " tokens with intents, ",
    "builder.tokens_without": " without. Counted with ",
    "builder.tokens_end": ".",
    "builder.tokens_counted": "Counted with ",
    "builder.tokens_per_request": ": ",
    "builder.tokens_per_request_end": " tokens of tool descriptions per request.",
    "builder.import_title": "Import actions from an OpenAPI document",
    "builder.import_help": (
        "Each operation of the API becomes a tool. Choose a JSON or YAML file, or paste "
        "the document's address."
    ),
    "builder.import_drop": "Choose or drop an OpenAPI file",
    "builder.import_file_label": "OpenAPI file",
    "builder.import_url_label": "OpenAPI document URL",
    "builder.import": "Import",
    "builder.importing": "Importing…",
    "builder.source_native": "Built-in tools",
    "builder.source_mcp": "MCP server: {server}",
    "builder.source_actions": "Actions: {domain}",
    "builder.server_unavailable": (
        "This server is not available right now ({reason}); its tools can't be picked."
    ),
    "builder.sandbox_unavailable": "bash_tool and run_tools_with_code are not offered: {reason}.",
    "builder.error_agent_gone": (
        "That agent no longer exists; it may have been deleted in another tab."
    ),
    "builder.error_name_required": (
        "Give the agent a name before saving (any text, e.g. “Code reviewer”)."
    ),
    "builder.error_deleted_save_again": (
        "This agent was deleted meanwhile; Save again to create it anew."
    ),
    "builder.error_cannot_duplicate": "That agent no longer exists, so it can't be duplicated.",
    "builder.error_deleted_save": "This agent was deleted meanwhile; Save to create it anew.",
    "builder.error_url_required": "Paste the address of an OpenAPI document first (https://…).",
    "builder.saved": "Saved “{name}”.",
    "builder.created": "Created “{name}”.",
    "builder.deleted": "Agent deleted.",
    "builder.read_only": (
        "This agent is shared by its owner and is read-only for you; Duplicate it to make "
        "your own copy."
    ),
    "builder.read_only_note": "Shared with you, read-only: Duplicate it to change a copy.",
    "builder.share": "Share read-only",
    "builder.shared": "Shared with everyone",
    "builder.goals": "Goals",
    "builder.goals_help": (
        "With goals, each turn starts with the model choosing the one that fits the request; "
        "that turn is offered only the tools of the families the goal may use."
    ),
    "builder.goal_add": "Add goal",
    "builder.goal_id": "Id",
    "builder.goal_description": "When to choose it",
    "builder.goal_description_placeholder": "e.g. Find where something is handled in the code",
    "builder.goal_delegates": "Tools it may use",
    "builder.goal_remove": "Remove goal {goal}",
    "builder.goal_delegate_label": "{goal} may use {family}",
    "builder.goal_family_unpicked": "No picked tool is in this family",
    "builder.goal_no_families": "Pick tools above to let a goal use them.",
    "builder.scopes": "Scopes",
    "builder.scopes_help": (
        "The material the goals work on: when the model chooses a goal, it is told the "
        "scopes serving it."
    ),
    "builder.scope_add": "Add scope",
    "builder.scope_id": "Id",
    "builder.scope_description": "What it is",
    "builder.scope_category": "Category",
    "builder.scope_category_placeholder": "e.g. knowledge",
    "builder.scope_goals": "Goals it serves",
    "builder.scope_remove": "Remove scope {scope}",
    "builder.scope_goal_label": "{scope} serves {goal}",
    "builder.scope_no_goals": "Add a goal above to let a scope serve it.",
    "builder.error_not_owner_delete": (
        "Only its owner can delete an agent, and only while it exists."
    ),
    "builder.imported": "Imported {n} actions from {title}.",
    "builder.imported#one": "Imported 1 action from {title}.",
    "builder.toggle_name": "{text}: {purpose}",
    "builder.describe_intent_short": "Describe",
    "builder.background_short": "Background",
    "builder.defer_short": "On demand",
    "builder.code_only_short": "Code only",
    "builder.describe_intent_label": "show what {tool} is doing",
    "builder.background_label": "let {tool} run in the background",
    "builder.defer_label": "load {tool} only when needed",
    "builder.code_only_label": "let only code call {tool}",
    "builder.describe_intent_info": (
        "Show what this tool is doing. Before it runs, the assistant writes one short "
        "sentence, like “Searching for the login code”, and people see it on the tool's "
        "card while it works. This adds about {tokens} tokens to every request."
    ),
    "builder.describe_intent_code_only": (
        "Not available: this tool is only called from code the assistant runs, so no card "
        "ever shows a sentence for it. Your setting is kept for when that changes."
    ),
    "builder.describe_intent_own_param": (
        "Not available: this tool already has its own field called “intent”, so a "
        "description can't be added without confusing the two."
    ),
    "builder.describe_intent_not_object": (
        "Not available: this tool doesn't take named fields, so a description can't be added."
    ),
    "builder.describe_intent_excluded": (
        "Not available: this is a behind-the-scenes helper that never shows a card."
    ),
    "builder.background_info": (
        "Let this tool keep working in the background while the conversation carries on. "
        "The assistant checks back for the result later."
    ),
    "builder.background_unavailable": (
        "Not available: this tool has to finish before the assistant can go on."
    ),
    "builder.defer_info": (
        "Keep this tool out of every request and let the assistant find it by searching "
        "when it needs it. Requests get smaller; the first use takes a moment longer."
    ),
    "builder.defer_unavailable": "Not available: the assistant needs this tool to find the others.",
    "builder.code_only_info": (
        "Only code the assistant runs may use this tool; the assistant can't call it "
        "directly. Useful for tools called many times in a row."
    ),
    "builder.code_only_unavailable": "Not available: this tool is how the assistant runs code.",
    "builder.describe_all": "Describe all tools",
    "builder.describe_all_label": "Describe all tools of {source}",
    "builder.describe_all_info": (
        "Turn “Describe” on for every tool in this group that can use it; click again to "
        "turn them all off. Together they add about {tokens} tokens to every request."
    ),
    "builder.describe_all_none": (
        "None of these tools can describe what it is doing, so there is nothing to turn on."
    ),
    "builder.tokens": "+{n} tokens",
    # A call that waits for the user (core/pauses.py, core/pause_cards.py).
    "error.restarted": "The server restarted while this turn waited for you.",
    "error.restarted_hint": "Nothing ran after the pause. Retry to ask again.",
    "approval.prompt": "Approve: {label}",
    "subagent.asks": "{name}: {prompt}",
    "subagent.self": "Subagent",
    "subagent.started": 'Subagent "{name}" started',
    "subagent.calls": "{n} calls",
    "subagent.calls#one": "1 call",
    "approval.approve": "Approve once",
    "approval.always_conversation": "Always for {tool} in this conversation",
    "approval.always_agent": "Always for {tool} for this agent",
    "approval.deny": "Deny",
    "approval.reason": "Reason for denying (optional; the model reads it)",
    "approval.edit": "Edit arguments",
    "approval.edit_submit": "Approve with these arguments",
    "approval.waiting": "Waiting for the owner of the conversation to decide",
    "approval.tab_waiting": "Approval needed",
    "approval.scope_once": "once",
    "approval.scope_conversation": "always for this tool in this conversation",
    "approval.scope_agent": "always for this tool for this agent",
    "approval.approved_you": "Approved by you · {scope}",
    "approval.approved_auto": "Approved automatically (--yes) · {scope}",
    "approval.denied_you": "Denied by you",
    "approval.denied_you_reason": "Denied by you: {reason}",
    "approval.denied_auto": "Denied automatically (--deny-all)",
    "approval.denied_auto_reason": "Denied automatically (--deny-all): {reason}",
    "approval.edited": " · with your edits",
    "approval.expired": "Not decided: the turn ended first",
    "question.placeholder": "Your answer",
    "question.submit": "Answer",
    "question.answered": "You answered: {answer}",
    "question.unanswered": "Left unanswered",
    "question.expired": "Not answered: the turn ended first",
    "question.tab_waiting": "Question for you",
    "builder.approval_short": "Ask first",
    "builder.approval_label": "ask before each call of {tool}",
    "builder.approval_info": (
        "Each call of this tool waits in the chat until you approve it, showing what it is "
        "for and its exact arguments. You can deny it, edit its arguments, or allow it for "
        "good."
    ),
    "builder.approval_default": "Ask before changing the workspace",
    "builder.approval_default_label": "ask before every tool that changes the workspace",
    "builder.approval_default_info": (
        "Tools that write or delete files wait for your approval, unless a tool's own "
        "Ask first switch is off."
    ),
}

_ES: dict[str, str] = {
    "card.running": "Ejecutando {tool}",
    "card.ran": "Se ejecutó {tool}",
    "card.in_server": "{label} en {server}",
    "card.sibling": " · «{value}»",
    "card.failed": "Falló: {label}",
    "card.cancelled": "Cancelado: {label}",
    "card.background": "{label} · en segundo plano",
    "group.used": "Se usaron {n} herramientas",
    "group.used#one": "Se usó 1 herramienta",
    "group.server_suffix": " — {server}",
    "group.agents_running": "Ejecutando {n} agentes",
    "group.agents_running#one": "Ejecutando 1 agente",
    "group.agents_ran": "Se ejecutaron {n} agentes",
    "group.agents_ran#one": "Se ejecutó 1 agente",
    "group.questions_asking": "Haciendo {n} preguntas",
    "group.questions_asking#one": "Haciendo 1 pregunta",
    "group.questions_asked": "Se hicieron {n} preguntas",
    "group.questions_asked#one": "Se hizo 1 pregunta",
    "group.aria": "{label}, {n} herramientas",
    "group.aria#one": "{label}, 1 herramienta",
    "live.running": "Ejecutando {tool}",
    "ui.send": "Enviar",
    "ui.stop": "Detener",
    "ui.new_chat": "Nuevo chat",
    "ui.placeholder": "Escribe un mensaje al agente…",
    "ui.arguments": "Argumentos",
    "ui.result": "Resultado",
    "ui.rename": "Cambiar nombre",
    "ui.delete": "Eliminar",
    "ui.language": "Idioma",
    "ui.agents": "Agentes",
    "ui.goal": "Objetivo",
    "ui.intents": "Panel de intenciones",
    "ui.density": "Densidad de la vista",
    "ui.density_full": "Completa",
    "ui.density_intents": "Intenciones",
    "ui.density_header": "Solo encabezados",
    "ui.theme": "Tema de color",
    "ui.theme_light": "Claro",
    "ui.theme_dark": "Oscuro",
    "ui.theme_system": "Sistema",
    "ui.menu": "Conversaciones",
    "ui.menu_close": "Cerrar conversaciones",
    "ui.timeline": "Llamadas a herramientas de este turno",
    "ui.copy_reply": "Copiar respuesta",
    "ui.copy_code": "Copiar código",
    "ui.copied": "Copiado",
    "ui.copy_failed": (
        "No se pudo copiar: el navegador no permitió usar el portapapeles. "
        "Selecciona el texto y cópialo."
    ),
    "ui.search": "Buscar conversaciones",
    "ui.search_none": "Ninguna conversación coincide.",
    "ui.shortcuts": "Atajos de teclado",
    "ui.shortcut_focus_input": "Ir al cuadro de mensaje",
    "ui.shortcut_stop": "Detener el turno en curso",
    "ui.shortcut_help": "Mostrar estos atajos",
    "ui.shortcuts_note": "? abre esta lista cuando no estás escribiendo en un campo.",
    "ui.close": "Cerrar",
    "ui.share": "Compartir enlace de solo lectura",
    "ui.share_url": "Enlace de solo lectura a esta conversación",
    "ui.share_revoke": "Revocar enlace",
    "ui.rewind": "Rebobinar a antes de",
    "ui.rewind_preview": "Lo que devuelve el rebobinado",
    "ui.rewind_files": "Restaurar archivos",
    "ui.rewind_all": "Restaurar archivos y conversación",
    "ui.rewind_none": "Ningún archivo cambia: el espacio de trabajo ya está como estaba.",
    "ui.trace": "Traza",
    "ui.compacted": "Conversación compactada",
    "ui.compacted_note": (
        "Para caber en el presupuesto de contexto, las llamadas a herramientas de arriba "
        "ya no están en lo que lee el modelo. En su lugar lee estas líneas, una por llamada:"
    ),
    "ui.shared_notice": "Vista de solo lectura de una conversación compartida",
    "ui.share_revoked": (
        "Este enlace ya no comparte ninguna conversación: su propietario lo revocó o nunca existió."
    ),
    "ui.retry": "Reintentar",
    "ui.error_detail": "Detalles",
    "ui.regenerate": "Regenerar respuesta",
    "ui.continue": "Continuar",
    "ui.edit_message": "Editar mensaje",
    "ui.edit_save": "Guardar y enviar",
    "ui.edit_cancel": "Cancelar",
    "ui.edit_label": "Mensaje editado",
    "ui.versions": "Versiones",
    "ui.version_previous": "Versión anterior",
    "ui.version_next": "Versión siguiente",
    "error.unreachable": "No se pudo contactar con el proveedor del modelo.",
    "error.unreachable_hint": "Comprueba que su servidor está en marcha y que el base_url del "
    "endpoint apunta a él; luego reintenta.",
    "error.auth": "El proveedor del modelo rechazó la clave de API.",
    "error.auth_hint": "Configura para este endpoint un api_key válido que pueda usar este "
    "modelo (en intent_ui.yaml o en la variable de entorno que indica), reinicia la "
    "aplicación y reintenta.",
    "error.not_found": "El proveedor del modelo no conoce esta dirección ni este modelo.",
    "error.not_found_hint": "Revisa el base_url del endpoint y el nombre del modelo; luego "
    "reintenta.",
    "error.rate_limit": "El proveedor del modelo está limitando las solicitudes, o se agotó "
    "la cuota.",
    "error.rate_limit_hint": "Espera un momento y reintenta; si sigue pasando, revisa el plan "
    "y la cuota de la clave de API.",
    "error.provider": "El proveedor del modelo no pudo responder.",
    "error.provider_hint": "Reintenta en un momento; si sigue fallando, los detalles citan lo "
    "que dijo el proveedor.",
    "error.cut_off": "La respuesta quedó cortada: el modelo alcanzó su límite de salida.",
    "error.cut_off_hint": "Reintenta, pide una respuesta más corta o sube max_tokens para este "
    "modelo.",
    "error.max_rounds": "El turno se detuvo tras demasiadas rondas de llamadas a herramientas.",
    "error.max_rounds_hint": "Reintenta, o pide una tarea más pequeña, paso a paso.",
    "error.internal": "La aplicación falló al ejecutar este turno.",
    "error.internal_hint": "Reintenta; si vuelve a fallar, el registro del servidor dice qué pasó.",
    "error.failed": "El turno terminó con un error.",
    "error.failed_hint": "Reintenta; los detalles dicen qué salió mal.",
    "error.tool": "Fallaron {n} herramientas; la primera fue {tool}.",
    "error.tool#one": "Falló una herramienta: {tool}.",
    "error.tool_hint": "El modelo lo supo y respondió sin su resultado. Revisa la herramienta "
    "(su servidor MCP, la acción o los argumentos) y reintenta.",
    "error.empty": "El modelo terminó su turno sin responder.",
    "error.empty_hint": "Reintenta, o pregunta de otra manera.",
    # The agent builder (`/agents`).
    "builder.back_to_chat": "← Chat",
    "builder.new_agent": "Nuevo agente",
    "builder.saved_agents": "Agentes guardados",
    "builder.agent_tools": "{n} herramientas",
    "builder.agent_tools#one": "1 herramienta",
    "builder.edit_agent": "Editar {name}",
    "builder.duplicate_agent": "Duplicar {name}",
    "builder.delete_agent": "Eliminar {name}",
    "builder.name": "Nombre",
    "builder.name_placeholder": "p. ej., Revisor de código",
    "builder.instructions": "Instrucciones",
    "builder.instructions_placeholder": "¿Qué debe hacer este agente y cómo?",
    "builder.endpoint": "Endpoint",
    "builder.model": "Modelo",
    "builder.save": "Guardar",
    "builder.unsaved": "Agente nuevo, aún sin guardar",
    "builder.tools": "Herramientas",
    "builder.tools_help": (
        "Marca las herramientas que puede usar este agente. Los interruptores junto a cada "
        "herramienta deciden cómo se comporta; los de las funciones que tu administrador "
        "ha desactivado no se muestran."
    ),
    "builder.tokens_lead": "Descripciones de herramientas enviadas en cada solicitud: ",
    "builder.tokens_with": " tokens con intenciones, ",
    "builder.tokens_without": " sin ellas. Contados con ",
    "builder.tokens_end": ".",
    "builder.tokens_counted": "Contados con ",
    "builder.tokens_per_request": ": ",
    "builder.tokens_per_request_end": " tokens de descripciones de herramientas por solicitud.",
    "builder.import_title": "Importar acciones desde un documento OpenAPI",
    "builder.import_help": (
        "Cada operación de la API se convierte en una herramienta. Elige un archivo JSON o "
        "YAML, o pega la dirección del documento."
    ),
    "builder.import_drop": "Elige o suelta un archivo OpenAPI",
    "builder.import_file_label": "Archivo OpenAPI",
    "builder.import_url_label": "URL del documento OpenAPI",
    "builder.import": "Importar",
    "builder.importing": "Importando…",
    "builder.source_native": "Herramientas integradas",
    "builder.source_mcp": "Servidor MCP: {server}",
    "builder.source_actions": "Acciones: {domain}",
    "builder.server_unavailable": (
        "Este servidor no está disponible ahora ({reason}); no se pueden elegir sus herramientas."
    ),
    "builder.sandbox_unavailable": "bash_tool y run_tools_with_code no se ofrecen: {reason}.",
    "builder.error_agent_gone": (
        "Ese agente ya no existe; puede que se haya eliminado en otra pestaña."
    ),
    "builder.error_name_required": (
        "Ponle un nombre al agente antes de guardar (cualquier texto, p. ej., «Revisor de código»)."
    ),
    "builder.error_deleted_save_again": (
        "Este agente se eliminó mientras tanto; vuelve a guardar para crearlo de nuevo."
    ),
    "builder.error_cannot_duplicate": "Ese agente ya no existe, así que no se puede duplicar.",
    "builder.error_deleted_save": (
        "Este agente se eliminó mientras tanto; guarda para crearlo de nuevo."
    ),
    "builder.error_url_required": "Primero pega la dirección de un documento OpenAPI (https://…).",
    "builder.saved": "Se guardó «{name}».",
    "builder.created": "Se creó «{name}».",
    "builder.deleted": "Agente eliminado.",
    "builder.read_only": (
        "Su propietario comparte este agente y para ti es de solo lectura; duplícalo para "
        "tener tu propia copia."
    ),
    "builder.read_only_note": "Compartido contigo, solo lectura: duplícalo para cambiar una copia.",
    "builder.share": "Compartir (solo lectura)",
    "builder.shared": "Compartido con todos",
    "builder.goals": "Objetivos",
    "builder.goals_help": (
        "Con objetivos, cada turno empieza con el modelo eligiendo el que encaja con la "
        "petición; ese turno solo ofrece las herramientas de las familias que el objetivo "
        "puede usar."
    ),
    "builder.goal_add": "Añadir objetivo",
    "builder.goal_id": "Id",
    "builder.goal_description": "Cuándo elegirlo",
    "builder.goal_description_placeholder": "p. ej. Encontrar dónde se gestiona algo en el código",
    "builder.goal_delegates": "Herramientas que puede usar",
    "builder.goal_remove": "Quitar el objetivo {goal}",
    "builder.goal_delegate_label": "{goal} puede usar {family}",
    "builder.goal_family_unpicked": "Ninguna herramienta elegida es de esta familia",
    "builder.goal_no_families": "Elige herramientas arriba para que un objetivo pueda usarlas.",
    "builder.scopes": "Ámbitos",
    "builder.scopes_help": (
        "El material con el que trabajan los objetivos: cuando el modelo elige un objetivo, "
        "se le indican los ámbitos que lo sirven."
    ),
    "builder.scope_add": "Añadir ámbito",
    "builder.scope_id": "Id",
    "builder.scope_description": "Qué es",
    "builder.scope_category": "Categoría",
    "builder.scope_category_placeholder": "p. ej. conocimiento",
    "builder.scope_goals": "Objetivos a los que sirve",
    "builder.scope_remove": "Quitar el ámbito {scope}",
    "builder.scope_goal_label": "{scope} sirve a {goal}",
    "builder.scope_no_goals": "Añade un objetivo arriba para que un ámbito pueda servirlo.",
    "builder.error_not_owner_delete": (
        "Solo su propietario puede eliminar un agente, y solo mientras exista."
    ),
    "builder.imported": "Se importaron {n} acciones de {title}.",
    "builder.imported#one": "Se importó 1 acción de {title}.",
    "builder.toggle_name": "{text}: {purpose}",
    "builder.describe_intent_short": "Describir",
    "builder.background_short": "En segundo plano",
    "builder.defer_short": "A demanda",
    "builder.code_only_short": "Solo código",
    "builder.describe_intent_label": "mostrar lo que hace {tool}",
    "builder.background_label": "dejar que {tool} se ejecute en segundo plano",
    "builder.defer_label": "cargar {tool} solo cuando haga falta",
    "builder.code_only_label": "que solo el código pueda llamar a {tool}",
    "builder.describe_intent_info": (
        "Muestra lo que hace esta herramienta. Antes de ejecutarla, el asistente escribe una "
        "frase corta, como «Buscando el código de inicio de sesión», que se ve en la tarjeta "
        "de la herramienta mientras trabaja. Añade unos {tokens} tokens a cada solicitud."
    ),
    "builder.describe_intent_code_only": (
        "No disponible: esta herramienta solo se llama desde el código que ejecuta el "
        "asistente, así que ninguna tarjeta muestra una frase para ella. Tu ajuste se "
        "conserva por si eso cambia."
    ),
    "builder.describe_intent_own_param": (
        "No disponible: esta herramienta ya tiene su propio campo llamado «intent», así que "
        "no se puede añadir una descripción sin confundir ambos."
    ),
    "builder.describe_intent_not_object": (
        "No disponible: esta herramienta no recibe campos con nombre, así que no se puede "
        "añadir una descripción."
    ),
    "builder.describe_intent_excluded": (
        "No disponible: es una herramienta auxiliar interna que nunca muestra una tarjeta."
    ),
    "builder.background_info": (
        "Deja que esta herramienta siga trabajando en segundo plano mientras la conversación "
        "continúa. El asistente vuelve más tarde a por el resultado."
    ),
    "builder.background_unavailable": (
        "No disponible: esta herramienta tiene que terminar antes de que el asistente pueda "
        "continuar."
    ),
    "builder.defer_info": (
        "Deja esta herramienta fuera de cada solicitud y permite que el asistente la "
        "encuentre buscando cuando la necesite. Las solicitudes son más pequeñas; el primer "
        "uso tarda un poco más."
    ),
    "builder.defer_unavailable": (
        "No disponible: el asistente necesita esta herramienta para encontrar las demás."
    ),
    "builder.code_only_info": (
        "Solo el código que ejecuta el asistente puede usar esta herramienta; el asistente "
        "no puede llamarla directamente. Útil para herramientas que se llaman muchas veces "
        "seguidas."
    ),
    "builder.code_only_unavailable": (
        "No disponible: esta herramienta es la forma en que el asistente ejecuta código."
    ),
    "builder.describe_all": "Describir todas las herramientas",
    "builder.describe_all_label": "Describir todas las herramientas de {source}",
    "builder.describe_all_info": (
        "Activa «Describir» en todas las herramientas de este grupo que lo admiten; vuelve a "
        "hacer clic para desactivarlas todas. En conjunto añaden unos {tokens} tokens a "
        "cada solicitud."
    ),
    "builder.describe_all_none": (
        "Ninguna de estas herramientas puede describir lo que hace, así que no hay nada que "
        "activar."
    ),
    "builder.tokens": "+{n} tokens",
    "error.restarted": "El servidor se reinició mientras este turno te esperaba.",
    "error.restarted_hint": "No se ejecutó nada tras la pausa. Reintenta para preguntar de nuevo.",
    "approval.prompt": "Aprobar: {label}",
    "subagent.asks": "{name}: {prompt}",
    "subagent.self": "Subagente",
    "subagent.started": 'Subagente "{name}" iniciado',
    "subagent.calls": "{n} llamadas",
    "subagent.calls#one": "1 llamada",
    "approval.approve": "Aprobar una vez",
    "approval.always_conversation": "Siempre {tool} en esta conversación",
    "approval.always_agent": "Siempre {tool} para este agente",
    "approval.deny": "Denegar",
    "approval.reason": "Motivo de la denegación (opcional; el modelo lo lee)",
    "approval.edit": "Editar argumentos",
    "approval.edit_submit": "Aprobar con estos argumentos",
    "approval.waiting": "Esperando la decisión del dueño de la conversación",
    "approval.tab_waiting": "Aprobación necesaria",
    "approval.scope_once": "una vez",
    "approval.scope_conversation": "siempre para esta herramienta en esta conversación",
    "approval.scope_agent": "siempre para esta herramienta en este agente",
    "approval.approved_you": "Aprobado por ti · {scope}",
    "approval.approved_auto": "Aprobado automáticamente (--yes) · {scope}",
    "approval.denied_you": "Denegado por ti",
    "approval.denied_you_reason": "Denegado por ti: {reason}",
    "approval.denied_auto": "Denegado automáticamente (--deny-all)",
    "approval.denied_auto_reason": "Denegado automáticamente (--deny-all): {reason}",
    "approval.edited": " · con tus cambios",
    "approval.expired": "Sin decidir: el turno terminó antes",
    "question.placeholder": "Tu respuesta",
    "question.submit": "Responder",
    "question.answered": "Respondiste: {answer}",
    "question.unanswered": "Sin respuesta",
    "question.expired": "Sin responder: el turno terminó antes",
    "question.tab_waiting": "Pregunta para ti",
    "builder.approval_short": "Preguntar antes",
    "builder.approval_label": "preguntar antes de cada llamada a {tool}",
    "builder.approval_info": (
        "Cada llamada a esta herramienta espera en el chat hasta que la apruebes, con su "
        "propósito y sus argumentos exactos. Puedes denegarla, editar sus argumentos o "
        "permitirla siempre."
    ),
    "builder.approval_default": "Preguntar antes de cambiar el espacio de trabajo",
    "builder.approval_default_label": (
        "preguntar antes de cada herramienta que cambia el espacio de trabajo"
    ),
    "builder.approval_default_info": (
        "Las herramientas que escriben o borran archivos esperan tu aprobación, salvo que "
        "su propio interruptor Preguntar antes esté apagado."
    ),
}

# Japanese has no grammatical plural, so no `#one` forms. The server is appended in
# full-width parentheses because "in {server}" has no natural postfix word order.
_JA: dict[str, str] = {
    "card.running": "{tool} を実行中",
    "card.ran": "{tool} を実行しました",
    "card.in_server": "{label}（{server}）",
    "card.sibling": "・「{value}」",
    "card.failed": "失敗: {label}",
    "card.cancelled": "キャンセル済み: {label}",
    "card.background": "{label} · バックグラウンドで実行中",
    "group.used": "{n} 個のツールを使用しました",
    "group.server_suffix": " — {server}",
    "group.agents_running": "{n} 個のエージェントを実行中",
    "group.agents_ran": "{n} 個のエージェントを実行しました",
    "group.questions_asking": "{n} 件の質問をしています",
    "group.questions_asked": "{n} 件の質問をしました",
    "group.aria": "{label}、{n} 個のツール",
    "live.running": "{tool} を実行中",
    "ui.send": "送信",
    "ui.stop": "停止",
    "ui.new_chat": "新しいチャット",
    "ui.placeholder": "エージェントにメッセージを送信…",
    "ui.arguments": "引数",
    "ui.result": "結果",
    "ui.rename": "名前を変更",
    "ui.delete": "削除",
    "ui.language": "言語",
    "ui.agents": "エージェント",
    "ui.goal": "目標",
    "ui.intents": "インテントのダッシュボード",
    "ui.density": "表示密度",
    "ui.density_full": "すべて",
    "ui.density_intents": "意図のみ",
    "ui.density_header": "見出しのみ",
    "ui.theme": "配色",
    "ui.theme_light": "ライト",
    "ui.theme_dark": "ダーク",
    "ui.theme_system": "システム",
    "ui.menu": "会話",
    "ui.menu_close": "会話を閉じる",
    "ui.timeline": "このターンのツール呼び出し",
    "ui.copy_reply": "返信をコピー",
    "ui.copy_code": "コードをコピー",
    "ui.copied": "コピーしました",
    "ui.copy_failed": (
        "コピーできませんでした（ブラウザーがクリップボードを許可しませんでした）。"
        "テキストを選択してコピーしてください。"
    ),
    "ui.search": "会話を検索",
    "ui.search_none": "一致する会話はありません。",
    "ui.shortcuts": "キーボードショートカット",
    "ui.shortcut_focus_input": "メッセージ欄に移動",
    "ui.shortcut_stop": "実行中のターンを停止",
    "ui.shortcut_help": "このショートカットを表示",
    "ui.shortcuts_note": "入力欄の外で ? を押すと、この一覧が開きます。",
    "ui.close": "閉じる",
    "ui.share": "閲覧専用リンクを共有",
    "ui.share_url": "この会話への閲覧専用リンク",
    "ui.share_revoke": "リンクを無効にする",
    "ui.rewind": "この呼び出しの前に巻き戻す",
    "ui.rewind_preview": "巻き戻しで元に戻る内容",
    "ui.rewind_files": "ファイルを復元",
    "ui.rewind_all": "ファイルと会話を復元",
    "ui.rewind_none": "変更が必要なファイルはありません。ワークスペースは元のままです。",
    "ui.trace": "トレース",
    "ui.compacted": "会話を圧縮しました",
    "ui.compacted_note": (
        "コンテキストの予算に収めるため、上のツール呼び出しはモデルが読む内容から外されました。"
        "代わりに次の行を読みます（呼び出しごとに1行）:"
    ),
    "ui.shared_notice": "共有された会話の閲覧専用ビュー",
    "ui.share_revoked": (
        "このリンクでは会話を表示できません。所有者が無効にしたか、存在しないリンクです。"
    ),
    "ui.retry": "再試行",
    "ui.error_detail": "詳細",
    "ui.regenerate": "返信を再生成",
    "ui.continue": "続ける",
    "ui.edit_message": "メッセージを編集",
    "ui.edit_save": "保存して送信",
    "ui.edit_cancel": "キャンセル",
    "ui.edit_label": "編集中のメッセージ",
    "ui.versions": "バージョン",
    "ui.version_previous": "前のバージョン",
    "ui.version_next": "次のバージョン",
    "error.unreachable": "モデルプロバイダーに接続できませんでした。",
    "error.unreachable_hint": "サーバーが起動していて、エンドポイントの base_url がそのサーバーを"
    "指しているか確認してから、再試行してください。",
    "error.auth": "モデルプロバイダーが API キーを拒否しました。",
    "error.auth_hint": "このモデルを使える有効な api_key をこのエンドポイントに設定し"
    "（intent_ui.yaml か、そこで指定した環境変数）、アプリを再起動してから再試行してください。",
    "error.not_found": "モデルプロバイダーはこのアドレスもこのモデルも知りません。",
    "error.not_found_hint": "エンドポイントの base_url とモデル名を確認してから、"
    "再試行してください。",
    "error.rate_limit": "モデルプロバイダーがリクエストを制限しているか、利用枠を使い切りました。",
    "error.rate_limit_hint": "少し待ってから再試行してください。続く場合は API キーのプランと"
    "利用枠を確認してください。",
    "error.provider": "モデルプロバイダーが応答できませんでした。",
    "error.provider_hint": "少し待ってから再試行してください。失敗が続く場合、詳細に"
    "プロバイダーの返答があります。",
    "error.cut_off": "モデルが出力の上限に達したため、返答が途中で切れました。",
    "error.cut_off_hint": "再試行するか、短い返答を頼むか、このモデルの max_tokens を"
    "増やしてください。",
    "error.max_rounds": "ツール呼び出しのラウンドが多すぎたため、ターンが止まりました。",
    "error.max_rounds_hint": "再試行するか、小さな作業に分けて一つずつ頼んでください。",
    "error.internal": "このターンの実行中にアプリでエラーが起きました。",
    "error.internal_hint": "再試行してください。再び失敗する場合は、サーバーのログに"
    "原因があります。",
    "error.failed": "ターンがエラーで終わりました。",
    "error.failed_hint": "再試行してください。詳細に原因があります。",
    "error.tool": "{n} 個のツールが失敗しました。最初は {tool} です。",
    "error.tool_hint": "モデルには失敗が伝えられ、その結果なしで返答しました。"
    "ツール（MCP サーバー、アクション、引数）を確認してから再試行してください。",
    "error.empty": "モデルは返答せずにターンを終えました。",
    "error.empty_hint": "再試行するか、別の言い方で聞いてください。",
    # The agent builder (`/agents`).
    "builder.back_to_chat": "← チャット",
    "builder.new_agent": "新しいエージェント",
    "builder.saved_agents": "保存済みのエージェント",
    "builder.agent_tools": "{n} 個のツール",
    "builder.edit_agent": "{name} を編集",
    "builder.duplicate_agent": "{name} を複製",
    "builder.delete_agent": "{name} を削除",
    "builder.name": "名前",
    "builder.name_placeholder": "例: コードレビュアー",
    "builder.instructions": "指示",
    "builder.instructions_placeholder": "このエージェントに何を、どのようにしてほしいですか？",
    "builder.endpoint": "エンドポイント",
    "builder.model": "モデル",
    "builder.save": "保存",
    "builder.unsaved": "新しいエージェント（未保存）",
    "builder.tools": "ツール",
    "builder.tools_help": (
        "このエージェントが使えるツールにチェックを入れてください。各ツールの横のスイッチで"
        "動作を決めます。管理者がオフにした機能のスイッチは表示されません。"
    ),
    "builder.tokens_lead": "リクエストごとに送信されるツールの説明: ",
    "builder.tokens_with": " トークン（インテントあり）、",
    "builder.tokens_without": " トークン（インテントなし）。計算に使用: ",
    "builder.tokens_end": "",
    "builder.tokens_counted": "計算に使用: ",
    "builder.tokens_per_request": "。リクエストごとのツールの説明: ",
    "builder.tokens_per_request_end": " トークン。",
    "builder.import_title": "OpenAPI ドキュメントからアクションをインポート",
    "builder.import_help": (
        "API の各操作がツールになります。JSON または YAML ファイルを選ぶか、ドキュメントの"
        "アドレスを貼り付けてください。"
    ),
    "builder.import_drop": "OpenAPI ファイルを選択またはドロップ",
    "builder.import_file_label": "OpenAPI ファイル",
    "builder.import_url_label": "OpenAPI ドキュメントの URL",
    "builder.import": "インポート",
    "builder.importing": "インポート中…",
    "builder.source_native": "組み込みツール",
    "builder.source_mcp": "MCP サーバー: {server}",
    "builder.source_actions": "アクション: {domain}",
    "builder.server_unavailable": (
        "このサーバーは現在利用できません（{reason}）。そのツールは選択できません。"
    ),
    "builder.sandbox_unavailable": "bash_tool と run_tools_with_code は提供されません：{reason}。",
    "builder.error_agent_gone": (
        "そのエージェントはもう存在しません。別のタブで削除された可能性があります。"
    ),
    "builder.error_name_required": (
        "保存する前にエージェントに名前を付けてください（任意のテキスト。例:「コードレビュアー」）。"
    ),
    "builder.error_deleted_save_again": (
        "このエージェントはその間に削除されました。もう一度保存すると新しく作成されます。"
    ),
    "builder.error_cannot_duplicate": "そのエージェントはもう存在しないため、複製できません。",
    "builder.error_deleted_save": (
        "このエージェントはその間に削除されました。保存すると新しく作成されます。"
    ),
    "builder.error_url_required": (
        "先に OpenAPI ドキュメントのアドレス（https://…）を貼り付けてください。"
    ),
    "builder.saved": "「{name}」を保存しました。",
    "builder.created": "「{name}」を作成しました。",
    "builder.deleted": "エージェントを削除しました。",
    "builder.read_only": (
        "このエージェントは所有者が共有しているため、あなたには読み取り専用です。"
        "自分用のコピーを作るには複製してください。"
    ),
    "builder.read_only_note": "共有されています（読み取り専用）。変更するには複製してください。",
    "builder.share": "読み取り専用で共有",
    "builder.shared": "全員と共有中",
    "builder.goals": "目標",
    "builder.goals_help": (
        "目標があると、各ターンはまずモデルが依頼に合う目標を選び、そのターンでは目標が使える"
        "ファミリーのツールだけが提示されます。"
    ),
    "builder.goal_add": "目標を追加",
    "builder.goal_id": "ID",
    "builder.goal_description": "選ぶ場面",
    "builder.goal_description_placeholder": "例: コードのどこで処理されているかを探す",
    "builder.goal_delegates": "使えるツール",
    "builder.goal_remove": "目標 {goal} を削除",
    "builder.goal_delegate_label": "{goal} は {family} を使える",
    "builder.goal_family_unpicked": "このファミリーのツールは選ばれていません",
    "builder.goal_no_families": "目標に使わせるには、上でツールを選んでください。",
    "builder.scopes": "スコープ",
    "builder.scopes_help": (
        "目標が扱う資料です。モデルが目標を選ぶと、その目標に役立つスコープが伝えられます。"
    ),
    "builder.scope_add": "スコープを追加",
    "builder.scope_id": "ID",
    "builder.scope_description": "内容",
    "builder.scope_category": "カテゴリー",
    "builder.scope_category_placeholder": "例: knowledge",
    "builder.scope_goals": "対象の目標",
    "builder.scope_remove": "スコープ {scope} を削除",
    "builder.scope_goal_label": "{scope} は {goal} に役立つ",
    "builder.scope_no_goals": "スコープを目標に結びつけるには、上で目標を追加してください。",
    "builder.error_not_owner_delete": (
        "エージェントを削除できるのは所有者だけです（存在する間のみ）。"
    ),
    "builder.imported": "{title} から {n} 個のアクションをインポートしました。",
    "builder.toggle_name": "{text}：{purpose}",
    "builder.describe_intent_short": "説明",
    "builder.background_short": "バックグラウンド",
    "builder.defer_short": "必要時のみ",
    "builder.code_only_short": "コードのみ",
    "builder.describe_intent_label": "{tool} の動作を表示",
    "builder.background_label": "{tool} をバックグラウンドで実行",
    "builder.defer_label": "{tool} を必要なときだけ読み込む",
    "builder.code_only_label": "{tool} をコードからのみ呼び出せるようにする",
    "builder.describe_intent_info": (
        "このツールが何をしているかを表示します。実行前にアシスタントが「ログインのコードを"
        "検索中」のような短い文を書き、ツールの動作中はそのカードに表示されます。"
        "リクエストごとに約 {tokens} トークン増えます。"
    ),
    "builder.describe_intent_code_only": (
        "利用できません: このツールはアシスタントが実行するコードからのみ呼び出されるため、"
        "文を表示するカードがありません。状況が変わったときのために設定は保持されます。"
    ),
    "builder.describe_intent_own_param": (
        "利用できません: このツールには既に「intent」という独自の項目があるため、"
        "混同せずに説明を追加することはできません。"
    ),
    "builder.describe_intent_not_object": (
        "利用できません: このツールは名前付きの項目を受け取らないため、説明を追加できません。"
    ),
    "builder.describe_intent_excluded": (
        "利用できません: これはカードを表示しない裏方の補助ツールです。"
    ),
    "builder.background_info": (
        "会話を続けている間、このツールをバックグラウンドで動かし続けます。"
        "アシスタントは後で結果を確認します。"
    ),
    "builder.background_unavailable": (
        "利用できません: このツールが終わるまでアシスタントは先に進めません。"
    ),
    "builder.defer_info": (
        "このツールを毎回のリクエストに含めず、必要なときにアシスタントが検索して見つけ"
        "られるようにします。リクエストは小さくなりますが、初回の利用は少し時間がかかります。"
    ),
    "builder.defer_unavailable": (
        "利用できません: アシスタントは他のツールを見つけるためにこのツールを必要とします。"
    ),
    "builder.code_only_info": (
        "このツールはアシスタントが実行するコードからのみ使えます。アシスタントが直接"
        "呼び出すことはできません。何度も続けて呼び出すツールに便利です。"
    ),
    "builder.code_only_unavailable": (
        "利用できません: このツールはアシスタントがコードを実行するためのものです。"
    ),
    "builder.describe_all": "すべてのツールを説明",
    "builder.describe_all_label": "{source} のすべてのツールを説明",
    "builder.describe_all_info": (
        "このグループで使えるすべてのツールの「説明」をオンにします。もう一度クリックすると"
        "すべてオフになります。合計でリクエストごとに約 {tokens} トークン増えます。"
    ),
    "builder.describe_all_none": (
        "このグループには動作を説明できるツールがないため、オンにするものはありません。"
    ),
    "builder.tokens": "+{n} トークン",
    "error.restarted": "このターンがあなたを待っている間にサーバーが再起動しました。",
    "error.restarted_hint": (
        "一時停止の後は何も実行されていません。再試行してもう一度聞いてください。"
    ),
    "approval.prompt": "承認: {label}",
    "subagent.asks": "{name}: {prompt}",
    "subagent.self": "サブエージェント",
    "subagent.started": "サブエージェント「{name}」を開始しました",
    "subagent.calls": "{n} 件の呼び出し",
    "approval.approve": "今回だけ承認",
    "approval.always_conversation": "この会話では {tool} を常に許可",
    "approval.always_agent": "このエージェントでは {tool} を常に許可",
    "approval.deny": "拒否",
    "approval.reason": "拒否の理由 (任意、モデルが読みます)",
    "approval.edit": "引数を編集",
    "approval.edit_submit": "この引数で承認",
    "approval.waiting": "会話の所有者の判断を待っています",
    "approval.tab_waiting": "承認が必要です",
    "approval.scope_once": "今回のみ",
    "approval.scope_conversation": "この会話ではこのツールを常に",
    "approval.scope_agent": "このエージェントではこのツールを常に",
    "approval.approved_you": "あなたが承認 · {scope}",
    "approval.approved_auto": "自動で承認 (--yes) · {scope}",
    "approval.denied_you": "あなたが拒否",
    "approval.denied_you_reason": "あなたが拒否: {reason}",
    "approval.denied_auto": "自動で拒否 (--deny-all)",
    "approval.denied_auto_reason": "自動で拒否 (--deny-all): {reason}",
    "approval.edited": " · 編集あり",
    "approval.expired": "未決定: 先にターンが終わりました",
    "question.placeholder": "あなたの回答",
    "question.submit": "回答",
    "question.answered": "あなたの回答: {answer}",
    "question.unanswered": "回答なし",
    "question.expired": "未回答: 先にターンが終わりました",
    "question.tab_waiting": "あなたへの質問",
    "builder.approval_short": "事前に確認",
    "builder.approval_label": "{tool} を呼び出す前に毎回確認",
    "builder.approval_info": (
        "このツールの呼び出しは、チャットであなたが承認するまで待ちます。目的と正確な引数が"
        "表示されます。拒否、引数の編集、常に許可もできます。"
    ),
    "builder.approval_default": "ワークスペースを変更する前に確認",
    "builder.approval_default_label": "ワークスペースを変更するすべてのツールの前に確認",
    "builder.approval_default_info": (
        "ファイルを書き込む・削除するツールは、そのツール自身の「事前に確認」がオフでない限り、"
        "あなたの承認を待ちます。"
    ),
}

_MESSAGES: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "en": MappingProxyType(_EN),
        "es": MappingProxyType(_ES),
        "ja": MappingProxyType(_JA),
    }
)

SUPPORTED_LANGUAGES: tuple[str, ...] = tuple(_MESSAGES)
"""Language codes with a catalogue, the default (`en`) first."""

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class Catalog:
    """Message tables keyed by language code, with English as the fallback."""

    def __init__(self, messages: Mapping[str, Mapping[str, str]] = _MESSAGES) -> None:
        self._messages = messages

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self._messages)

    def template(self, key: str, lang: str = DEFAULT_LANGUAGE, *, one: bool = False) -> str:
        """The raw template for `key` after fallback (the key itself when unknown)."""
        requested = _normalise(lang)
        for code in (requested, requested.split("-", 1)[0], DEFAULT_LANGUAGE):
            table = self._messages.get(code)
            if table is None:
                continue
            if one and (key + _PLURAL_ONE) in table:
                return table[key + _PLURAL_ONE]
            if key in table:
                return table[key]
        return key

    def translate(self, key: str, lang: str = DEFAULT_LANGUAGE, **params: object) -> str:
        """The message for `key` in `lang`, with `{name}` placeholders filled from params."""
        one = params.get("n") == 1 and not isinstance(params.get("n"), bool)
        return _fill(self.template(key, lang, one=one), params)


def _fill(template: str, params: Mapping[str, object]) -> str:
    # A hand-rolled substitution rather than str.format: unknown placeholders stay literal
    # and stray braces in a translation can never raise.
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(params[name]) if name in params else match.group(0)

    return _PLACEHOLDER.sub(replace, template)


def _normalise(lang: object) -> str:
    return lang.strip().lower().replace("_", "-") if isinstance(lang, str) else ""


CATALOG = Catalog()
"""The application's catalogue."""


def translate(key: str, lang: str = DEFAULT_LANGUAGE, **params: object) -> str:
    """`CATALOG.translate`: the message for `key` in `lang` (English fallback)."""
    return CATALOG.translate(key, lang, **params)


def negotiate_language(
    preference: str | None, supported: tuple[str, ...] = SUPPORTED_LANGUAGES
) -> str:
    """The best supported language for an `Accept-Language` header or `navigator.language`.

    `es-MX` -> `es`; `ja-JP,ja;q=0.9` -> `ja`; `fr-CA,es;q=0.5` -> `es`; anything
    unparsable, `*` or unsupported -> `en`. Ranges are tried by descending quality
    (ties keep header order); for each range an exact match wins over its primary subtag.
    """
    if not isinstance(preference, str) or not preference.strip():
        return DEFAULT_LANGUAGE
    ranked: list[tuple[float, int, str]] = []
    for index, item in enumerate(preference.split(",")):
        tag, _, rest = item.partition(";")
        tag = _normalise(tag)
        if not tag or tag == "*":
            continue
        quality = _quality(rest)
        if quality > 0:
            ranked.append((-quality, index, tag))
    lowered = {code.lower(): code for code in supported}
    for _, _, tag in sorted(ranked):
        for candidate in (tag, tag.split("-", 1)[0]):
            if candidate in lowered:
                return lowered[candidate]
    return DEFAULT_LANGUAGE


def _quality(params: str) -> float:
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                quality = float(value.strip())
            except ValueError:
                return 0.0
            # Also rejects `nan`, which fails every comparison.
            return quality if 0.0 <= quality <= 1.0 else 0.0
    return 1.0
