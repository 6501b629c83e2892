"""Plotly figure builders shared by the report and the dashboard, one module per method family."""
