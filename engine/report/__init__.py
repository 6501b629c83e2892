"""The reviewer report: the page and one section module per method family."""
