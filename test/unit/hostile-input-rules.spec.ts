import { plainToInstance, Type } from 'class-transformer';
import { IsOptional, IsString, ValidateNested } from 'class-validator';
import { firstIllFormedText, isStorableText } from '../../src/common/http/text-input';
import { AcceptsNull, validateRequest } from '../../src/common/validation/null-rule';

describe('storable text (the edge check of ill-formed Unicode)', () => {
  it('accepts surrogate pairs and refuses lone surrogates and NUL', () => {
    expect(isStorableText('Ada 𝔘 🧨')).toBe(true);
    for (const bad of ['a\ud800b', 'a\udc00', '\ud800', 'x\udfff\ud800', 'a\u0000b']) expect(isStorableText(bad)).toBe(false);
  });

  it('names the first bad field by its path, and a bad property name by its parent', () => {
    expect(firstIllFormedText({ name: 'ok', params: { to: ['a', 'b\ud800'] } })).toBe('params.to[1]');
    expect(firstIllFormedText({ params: { ['k\u0000']: 1 } })).toBe('params');
    expect(firstIllFormedText({ a: 1, b: [true, null, { c: 'fine' }] })).toBeNull();
    // A body that is one string is reported at the root it is given; nothing, or an empty object, has nothing wrong.
    expect(firstIllFormedText('x\u0000', 'body')).toBe('body');
    expect(firstIllFormedText('fine', 'body')).toBeNull();
    expect(firstIllFormedText(undefined)).toBeNull();
    expect(firstIllFormedText(null)).toBeNull();
    expect(firstIllFormedText(Object.create(null) as object)).toBeNull();
    expect(firstIllFormedText({})).toBeNull();
    expect(firstIllFormedText(['\ud800'], 'body')).toBe('body[0]');
  });
});

class Inner {
  @IsOptional() @IsString() note?: string;
}

class Outer {
  @IsOptional() @IsString() name?: string;
  @AcceptsNull() @IsString() email?: string | null;
  @IsOptional() @ValidateNested() @Type(() => Inner) inner?: Inner;
  @IsOptional() free?: Record<string, unknown>;
}

describe('the null rule', () => {
  const errorsOf = async (plain: object) => {
    const errors = await validateRequest(plainToInstance(Outer, plain), { whitelist: true, forbidNonWhitelisted: true });
    return errors.map((e) => ({ property: e.property, children: e.children?.map((c) => c.property) ?? [] }));
  };

  it('refuses null in an optional field, including in a nested request class', async () => {
    expect(await errorsOf({ name: null })).toEqual([{ property: 'name', children: [] }]);
    expect(await errorsOf({ inner: { note: null } })).toEqual([{ property: 'inner', children: ['note'] }]);
  });

  it('lets null through where the field accepts it and inside free-form objects', async () => {
    expect(await errorsOf({ email: null, free: { anything: null } })).toEqual([]);
  });
});
