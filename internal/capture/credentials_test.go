package capture

import "testing"

func TestBlankCredentials(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"password", `<p>a</p><input type="password" name="pw" value="hunter22-secret"><p>b</p>`,
			`<p>a</p><input type="password" name="pw" value=""><p>b</p>`},
		{"password upper case", `<INPUT TYPE=PASSWORD VALUE='x1'>`, `<input type="PASSWORD" value="">`},
		{"credential by name", `<input name="api_token" value="tok_123">`, `<input name="api_token" value="">`},
		{"credential by autocomplete", `<input autocomplete="one-time-code" value="123456">`, `<input autocomplete="one-time-code" value="">`},
		{"plain input kept byte for byte", `<input  name="email" value="a@example.com" >`, `<input  name="email" value="a@example.com" >`},
		{"no input", `<div>text &amp; more</div>`, `<div>text &amp; more</div>`},
		{"the rest kept byte for byte", `<!doctype html><TABLE><tr><td>x</td></TABLE><input type=password value=s3cret><br>`,
			`<!doctype html><TABLE><tr><td>x</td></TABLE><input type="password" value=""><br>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BlankCredentials(tt.in); got != tt.want {
				t.Errorf("BlankCredentials(%q)\n= %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}
