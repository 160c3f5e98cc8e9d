"""Builds the Reflex app and registers its pages; nothing else."""

import reflex as rx


def index() -> rx.Component:
    return rx.box(rx.heading("Intent UI"), data_testid="chat-page")


app = rx.App()
app.add_page(index, route="/", title="Intent UI")
