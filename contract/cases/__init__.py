"""Cases: the catalog, what each case expects, the message model, and the families that render them."""
