"""The statecharts: one class per family of rulesets, the single authority on the flow."""
