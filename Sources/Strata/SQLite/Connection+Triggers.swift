import CSQLite

extension Connection {
    /// Whether this connection's statements fire the triggers of the main schema
    /// (`SQLITE_DBCONFIG_ENABLE_TRIGGER`, on by default). Switching it off affects this connection
    /// alone: other connections' writes still fire every trigger, this one's TEMP triggers still
    /// fire, and it can still create and drop triggers. SQLite expires every prepared statement of
    /// the connection when the setting changes (their compiled programs include the triggers or
    /// not): each is prepared again the next time it runs.
    /// - Throws: ``StrataError`` when SQLite refuses the option or reports a state other than the
    ///   one asked for.
    func setTriggersEnabled(_ enabled: Bool) throws {
        let state = try triggerState(enabled ? 1 : 0)
        guard state == enabled else {
            throw StrataError(.sqlite, "SQLITE_DBCONFIG_ENABLE_TRIGGER: asked to \(enabled ? "enable" : "disable") "
                              + "triggers, but they are still \(state ? "enabled" : "disabled")", path: path)
        }
    }

    /// Whether the main schema's triggers fire for this connection's statements.
    var triggersEnabled: Bool {
        get throws { try triggerState(-1) }
    }

    /// The one call of `sqlite3_db_config(SQLITE_DBCONFIG_ENABLE_TRIGGER)`: `value` 1 enables,
    /// 0 disables, -1 only asks. Returns the state after the call.
    private func triggerState(_ value: Int32) throws -> Bool {
        var state: Int32 = -1
        let code = strata_db_config_int(handle, SQLITE_DBCONFIG_ENABLE_TRIGGER, value, &state)
        do {
            try check(code)
        } catch var error as StrataError {
            error.message = "SQLITE_DBCONFIG_ENABLE_TRIGGER (\(value)) failed: \(error.message)"
            throw error
        }
        return state != 0
    }
}
