import { expect } from 'chai';
import { accountMessages } from '../../api/src/i18n/messages/accounts.ts';
import { billingMessages } from '../../api/src/i18n/messages/billing.ts';
import { json } from '../support/harness.ts';
import { createAccount, signUpAndLogin } from '../support/users.ts';
import { newSignup, startAccountsApp, tokenOf, type AccountsTestApp } from './fixtures.ts';

describe('rule 8: every message in en, pt and es; e-mails in the user\'s locale', () => {
  let fixture: AccountsTestApp;
  before(async () => {
    fixture = await startAccountsApp();
  });
  after(() => fixture.close());

  // Same keys in every language is enforced by defineMessages' type; same placeholders by test/foundation/errors.test.ts.
  it('every accounts and billing message exists in en, pt and es, and is translated', () => {
    for (const catalog of [accountMessages, billingMessages]) {
      for (const [key, english] of Object.entries(catalog.en)) {
        for (const locale of ['pt', 'es'] as const) {
          const text = (catalog[locale] as Record<string, string>)[key];
          expect(text, `${locale} ${key}`).to.be.a('string').and.not.equal(english);
        }
      }
    }
  });

  it('answers are localized from Accept-Language', async () => {
    const account = await createAccount(fixture.app);
    const cases = [
      ['pt', 'Nome de utilizador ou palavra-passe incorretos.'],
      ['es', 'Nombre de usuario o contraseña incorrectos.'],
      ['en', 'Incorrect username or password.'],
    ] as const;
    for (const [language, detail] of cases) {
      const response = await fixture.client({ 'Accept-Language': language }).logIn(account.username, 'wrong');
      expect(await json(response), language).to.deep.equal({ detail });
    }
    const taken = await fixture.client({ 'Accept-Language': 'es' }).post('/api/v1/users/', newSignup({ username: account.username }));
    expect((await json(taken)).detail).to.equal('Ese nombre de usuario ya está en uso.');
    const { client } = await signUpAndLogin(fixture.app, { trial: true });
    const trial = await client.post('/api/v1/users/me/activate-trial', undefined, { headers: { 'Accept-Language': 'pt' } });
    expect((await json(trial)).detail).to.equal('O período experimental já foi usado por esta conta ou por este endereço de e-mail.');
  });

  it('a signup takes its locale from Accept-Language, and the verification mail is in it', async () => {
    const signup = newSignup();
    const response = await fixture.client({ 'Accept-Language': 'es-ES,es;q=0.9' }).post('/api/v1/users/', signup);
    expect((await json(response)).locale).to.equal('es');
    const mail = await fixture.smtp.waitFor({ to: signup.email });
    expect(mail.subject).to.equal('Confirme su dirección de correo en Cutroom');
    expect(mail.text).to.contain(`Hola ${signup.name}:`);
    expect(tokenOf(mail)).to.be.a('string');
  });

  it("mails use the user's locale, not the request's", async () => {
    const { client, email } = await signUpAndLogin(fixture.app);
    expect((await client.patch('/api/v1/users/me', { locale: 'pt' })).status).to.equal(200);
    await fixture.client({ 'Accept-Language': 'en' }).post('/api/v1/auth/forgot-password', { email });
    const mail = await fixture.smtp.waitFor({ to: email });
    expect(mail.subject).to.equal('Redefina a sua palavra-passe do Cutroom');
    expect(mail.text).to.contain('A ligação é válida durante uma hora');
  });
});
