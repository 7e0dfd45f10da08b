"""Gradio UI for costa."""
