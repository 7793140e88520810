//! What the shared store's tests do on the server as an administrator would.

/// Runs one statement on the test's database as an administrator would; the first column of
/// its last row, as a number (0 when it returns none).
pub fn admin(url: &str, statement: &str) -> i64 {
    let (url, statement) = (url.to_owned(), statement.to_owned());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let client = runlog_store::postgres::scratch::connect(&url)
                .await
                .unwrap();
            let said = client.simple_query(&statement).await.unwrap();
            said.iter()
                .filter_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0),
                    _ => None,
                })
                .last()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        })
    })
    .join()
    .unwrap()
}
