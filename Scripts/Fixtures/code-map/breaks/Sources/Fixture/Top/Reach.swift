/// Top/ may use Middle/, which may use Base/: read as written, Top may not use Base itself.
func reach(_ ledger: Ledger) -> Int { ledger.store.count }
