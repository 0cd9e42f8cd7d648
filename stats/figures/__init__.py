"""The data of the report's figures (plotly), computed from the report document."""
