//! QR codes of invite links, drawn as SVG on the server (no network, no script).

use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};

/// `text` as an SVG QR code that scales to its container; empty if it cannot be encoded.
pub fn qr_svg(text: &str) -> String {
    match QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M) {
        Ok(code) => code
            .render::<svg::Color>()
            .min_dimensions(200, 200)
            .quiet_zone(true)
            .build(),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_link_becomes_an_svg_image() {
        let svg = super::qr_svg("http://klaxon.example/signup?invite=abc");
        assert!(svg.starts_with("<?xml") || svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("<path") || svg.contains("<rect"));
    }
}
