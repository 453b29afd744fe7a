"""The scheduler's pure steps: candidates, filters, prioritizers, selection and decision groups."""
